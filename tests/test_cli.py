"""The ``tilelab`` command line end to end (subprocesses on kernel files written here), and sharing records."""

from __future__ import annotations

import ast
import csv
import dataclasses
import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tomllib
from htmlcheck import foreign_images, parse
from sample_records import EVIL, sample_record

import tilelab

TESTS = Path(__file__).parent
REPO = TESTS.parent

CPU_KERNEL = '''
import tilelang
import tilelang.cpu.language as C


@tilelang.jit(target="c", out_idx=[-1])
def scale_add(N=1024, block=64):
    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), B: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            for i in C.serial(block):
                Out[bx * block + i] = A[bx * block + i] * 2.0 + B[bx * block + i]

    return main
'''


def _definition(path: Path, name: str) -> str:
    """The text of top-level function ``name`` of ``path``, decorators included."""
    text = path.read_text()
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    lines = text.splitlines()[node.decorator_list[0].lineno - 1 : node.end_lineno]
    return "\n".join(lines) + "\n"


def tilelab_cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilelab", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A folder holding ``gemm_kernels.py``: the tests' GEMM, and a main() that must not run on import."""
    folder = tmp_path_factory.mktemp("cli")
    gemm = _definition(TESTS / "kernels.py", "matmul")
    main = 'if __name__ == "__main__":\n    raise SystemExit("the script ran")\n'
    (folder / "gemm_kernels.py").write_text(f"import tilelang\nimport tilelang.language as T\n\n\n{gemm}\n\n{main}")
    return folder


@pytest.fixture(scope="module")
def two_records(workdir) -> tuple[Path, Path]:
    """The GEMM saved twice for sm_90 with ``--json``: 128x128 tiles and 64x128 tiles."""
    first = tilelab_cli("report", "gemm_kernels.py::matmul", "--arch", "sm_90", "--json", cwd=workdir)
    second = tilelab_cli(
        "report", "gemm_kernels.py::matmul", "--arch", "sm_90", "--json", "--args", "dict(block_M=64)",
        "-o", "small_tiles.json", cwd=workdir,
    )  # fmt: skip
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    return workdir / "matmul.json", workdir / "small_tiles.json"


def test_report_writes_one_script_free_html_page_with_every_explorer_section(workdir):
    done = tilelab_cli("report", "gemm_kernels.py::matmul", "--arch", "sm_90", "-o", "gemm.html", cwd=workdir)

    assert done.returncode == 0, done.stderr
    page = (workdir / "gemm.html").read_text()
    tree = parse(page)
    elements = [node for node in tree.iter() if not node.tag.startswith("#")]
    assert page.startswith("<!DOCTYPE html>")
    assert [node.tag for node in tree.children if node.tag == "html"] == ["html"]
    assert not [node for node in elements if node.tag == "script"]
    assert not [(node.tag, name) for node in elements for name in node.attrs if name.lower().startswith("on")]
    assert {"overview", "passes", "source", "layouts"} <= {node.attrs.get("data-section") for node in elements}
    assert "tl.LayoutInference" in tree.all_text()
    assert "matmul (sm_90)" in tree.find_all("title")[0].all_text()


def test_report_json_is_a_record_that_tilelab_load_reads(two_records):
    record = tilelab.load(two_records[0])

    assert record.ok and record.name == "matmul" and record.arch == "sm_90"
    assert "tl.LayoutInference" in [p.name for p in record.passes]
    assert record.arguments == {} and tilelab.load(two_records[1]).arguments == {"block_M": "64"}


def test_diff_of_a_record_with_itself_changes_nothing_and_exits_0(two_records, workdir):
    done = tilelab_cli("diff", two_records[0], two_records[0], "--fail-on", "registers,spills,shared,passes,launch", cwd=workdir)

    assert done.returncode == 0, done.stderr
    assert "passes: 0 added, 0 removed, 0 changed" in done.stdout
    assert "CUDA lines: +0 -0" in done.stdout
    assert not [n for n in parse((workdir / "diff.html").read_text()).iter() if n.tag == "script"]


def test_diff_of_two_tile_configs_fails_on_passes_and_reports_the_launch_change(two_records, workdir):
    done = tilelab_cli("diff", *two_records, "--fail-on", "passes", "-o", "tiles.html", cwd=workdir)
    quiet = tilelab_cli("diff", *two_records, "-o", "tiles.html", cwd=workdir)

    assert done.returncode == 1, done.stderr
    assert quiet.returncode == 0, quiet.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("launch: gemm_kernel: grid (8, 8, 1)") and "(8, 16, 1)" in line for line in lines)
    assert "shared memory: gemm_kernel: 49152 B (48 KiB) dynamic -> 36864 B (36 KiB) dynamic" in lines
    assert "changed: passes" in lines
    html = (workdir / "tiles.html").read_text()
    assert "data-tilelab='compare'" in html and "<script" not in html


def test_a_baseline_saved_before_tilelab_named_tilelangs_unnamed_passes_diffs_with_no_pass_change(two_records, workdir, capsys):
    """Such a record holds TVM's ``pass_fn`` where a newer one names the pass by its call: the same pass."""
    from tilelab.cli.main import main
    from tilelab.views.compare.data import CompareData

    new = tilelab.load(two_records[0])
    named_since = ("tilelang.analysis.NestedLoopChecker", "tilelang.transform.HoistBroadcastValues")
    assert all(name in [p.name for p in new.passes] for name in named_since)
    old = dataclasses.replace(
        new, passes=tuple(dataclasses.replace(p, name="pass_fn") if p.name.startswith(("tilelang.analysis.", "tilelang.transform.")) else p for p in new.passes)
    )  # fmt: skip
    old.save(workdir / "baseline.json")

    exit_code = main(["diff", str(workdir / "baseline.json"), str(two_records[0]), "--fail-on", "passes", "-o", str(workdir / "upgrade.html")])

    assert exit_code == 0
    assert "passes: 0 added, 0 removed, 0 changed" in capsys.readouterr().out
    assert CompareData(old, new).data()["only"] == [[], []]


def test_tune_writes_one_csv_row_per_config(tmp_path):
    (tmp_path / "cpu_kernels.py").write_text(CPU_KERNEL)

    done = tilelab_cli(
        "tune", "cpu_kernels.py::scale_add", "block=32,64,128", "where=block >= 64", "--target", "c",
        "--db", tmp_path / "history.db", "--workers", "2", "--out", "rows.csv", cwd=tmp_path,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    with (tmp_path / "rows.csv").open() as file:
        rows = list(csv.DictReader(file))
    assert [(row["block"], row["status"]) for row in rows] == [("64", "ok"), ("128", "ok")]
    assert all(float(row["latency_ms"]) > 0 for row in rows)
    assert "2/2 configs, 0 failed" in done.stdout
    assert "2/2" in done.stderr  # the progress bar


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["report", "missing.py::matmul"], "missing.py: no such file"),
        (["report", "raises.py::matmul"], "raises.py:2: importing it raised RuntimeError: no GPU driver"),
        (["report", "helpers.py::gemm"], "no kernel named 'gemm' (kernels there: none)"),
        (["report", "helpers.py::add"], "helpers.py::add is a function, not a @tilelang.jit"),
        (["report", "gemm_kernels.py::matmul", "--args", "(1,"], "is not a Python expression"),
        # Read before the file is imported (it would raise): a typo is told at once, not after TileLang's import.
        (["tune", "raises.py::matmul", "block_M=64,,128"], "cannot read 'block_M=64,,128'"),
        (["tune", "gemm_kernels.py", "block_M=64,128"], "'gemm_kernels.py': expected FILE.py::KERNEL"),
        (["tune", "missing.py::matmul", "block_M=64,128"], "missing.py: no such file"),
        (["diff", "missing.json", "missing.json"], "missing.json: no such file"),
        (["diff", "a.json", "b.json", "--fail-on", "speed"], "choose among registers,spills,shared,passes,launch"),
    ],
)
def test_bad_input_exits_2_with_one_line_on_stderr(workdir, args, says):
    (workdir / "raises.py").write_text('import sys\nraise RuntimeError("no GPU driver\\nsecond line")\n')
    (workdir / "helpers.py").write_text("def add(a, b):\n    return a + b\n")

    done = tilelab_cli(*args, cwd=workdir)

    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert says in done.stderr


def test_report_of_a_kernel_that_fails_to_compile_names_its_line_and_exits_1(tmp_path):
    broken = textwrap.dedent(
        """\
        import tilelang
        import tilelang.language as T


        @tilelang.jit(out_idx=[-1])
        def broken(M=256, N=256, block_M=128):
            @T.prim_func
            def main(A: T.Tensor((M, N), T.float16), C: T.Tensor((M, N), T.float16)):
                with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
                    A_s = T.alloc_shared((block_M, N), T.float16)
                    T.copy(A[bx * block_M, 0], A_s)
                    T.gemm(A_s, A_s, C)

            return main
        """
    )
    (tmp_path / "broken_kernels.py").write_text(broken)

    done = tilelab_cli("report", "broken_kernels.py::broken", "--arch", "sm_90", cwd=tmp_path)

    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert f"{tmp_path / 'broken_kernels.py'}:12: " in done.stderr
    assert "T.gemm" in done.stderr
    assert "failed" in (tmp_path / "broken.html").read_text()  # the failed record's report is still written


def test_parquet_rows_without_pyarrow_exit_2_before_anything_compiles(workdir):
    hide_pyarrow = "import sys; sys.modules['pyarrow'] = None; from tilelab.cli.main import main; sys.exit(main(sys.argv[1:]))"
    args = ["tune", "gemm_kernels.py::matmul", "block_M=64,128", "--arch", "sm_90", "--out", "rows.parquet"]

    done = subprocess.run([sys.executable, "-c", hide_pyarrow, *args], cwd=workdir, capture_output=True, text=True)

    assert done.returncode == 2
    assert done.stderr == "tilelab tune: --out rows.parquet: Parquet needs pyarrow (pip install pyarrow); or write rows.csv\n"


def test_the_console_script_runs_the_same_main_as_python_m_tilelab(capsys):
    script = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]["tilelab"]
    module, _, function = script.partition(":")
    entry = getattr(importlib.import_module(module), function)

    with pytest.raises(SystemExit) as exited:
        entry(["--help"])

    shown = capsys.readouterr().out
    assert exited.value.code == 0
    assert all(command in shown for command in ("report", "diff", "tune"))
    assert "from tilelab.cli.main import main" in (REPO / "tilelab" / "__main__.py").read_text()


def test_a_saved_record_loads_back_equal(tmp_path):
    record = sample_record(evil=True)

    record.save(tmp_path / "gemm.json")

    assert tilelab.load(tmp_path / "gemm.json") == record
    assert json.loads((tmp_path / "gemm.json").read_text())["record"]["name"] == record.name


def test_loading_a_file_that_is_not_a_record_says_which_file(tmp_path):
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    (tmp_path / "notes.txt").write_text("hello")

    with pytest.raises(ValueError, match=r"notes\.json"):
        tilelab.load(tmp_path / "notes.json")
    with pytest.raises(ValueError, match=r"notes\.txt is not JSON"):
        tilelab.load(tmp_path / "notes.txt")


def test_to_html_of_a_record_is_its_escaped_script_free_explorer_snapshot():
    page = tilelab.to_html(sample_record(evil=True))

    nodes = list(parse(page).iter())
    assert not [node for node in nodes if node.tag == "script"] and not foreign_images(parse(page))
    assert next(node.attrs.get("data-tilelab") for node in nodes if node.tag == "div") == "explorer"
    assert EVIL in parse(page).all_text()


def test_registers_and_spills_change_only_when_both_records_carry_machine_code():
    from tilelab.changes import record_changes
    from tilelab.records import KernelResources, MachineCodeRecord

    before, after, bare = sample_record(), sample_record(), sample_record()
    for record, registers, spill_stores in ((before, 128, 0), (after, 168, 16)):
        resources = {"gemm_kernel": KernelResources("gemm_kernel", registers, spill_stores=spill_stores)}
        # KernelRecord.machine_code is being added; set it as that field will hold it.
        object.__setattr__(record, "machine_code", MachineCodeRecord("sm_90", resources=resources))

    changes, unknown = record_changes(before, after), record_changes(before, bare)

    assert changes.registers == ("gemm_kernel: 128 -> 168",) and changes.spills == ("gemm_kernel: 0 B -> 16 B",)
    assert changes.changed("registers") and changes.changed("spills") and not changes.changed("passes")
    assert unknown.registers is None and not unknown.changed("registers")
    assert "registers: not recorded in both (no machine code)" in unknown.lines()
