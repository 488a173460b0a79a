"""Careless or hostile input found by probing: each gives one clear line, loses nothing and never hangs."""

from __future__ import annotations

import linecache
import signal
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from cells import gemm_cell
from htmlcheck import foreign_images, parse
from IPython.core.error import UsageError
from python_child import process_ends
from sample_records import EVIL, sample_record

import tilelab
from tilelab import sharing
from tilelab.errors import KernelCompileError
from tilelab.records import KernelResources, MachineCodeRecord, OccupancyRecord
from tilelab.tune.api import LargeSpaceWarning
from tilelab.views.explorer import ExplorerView


def _line_of(text: str, file: str) -> int:
    return next(number for number, line in enumerate(linecache.getlines(file), 1) if text in line)


def _record_on_arch(arch: str):
    """A record whose machine code and occupancy were measured on ``arch``."""
    occupancy = OccupancyRecord(arch, 128, 4, 2, 8, 64, 0.125, "shared memory", {"shared memory": 2})
    machine = MachineCodeRecord(
        arch,
        ptx="// PTX",
        resources={"gemm_kernel": KernelResources("gemm_kernel", 96)},
        occupancy={"gemm_kernel": occupancy},
    )
    return replace(sample_record(arch=arch), machine_code=machine)


def test_a_loaded_record_of_an_unknown_arch_renders_with_limits_unknown(tmp_path):
    arch = f"sm_99{EVIL}"
    _record_on_arch(arch).save(tmp_path / "record.json")

    markup = tilelab.to_html(tilelab.load(tmp_path / "record.json"))

    (card,) = parse(markup).find_all("div", data_tilelab="resource-card")
    assert "limits unknown" in card.all_text() and "registers per thread96" in card.all_text()
    assert not foreign_images(parse(markup))


def test_the_live_card_of_an_unknown_arch_says_its_limits_are_unknown():
    view = ExplorerView(_record_on_arch("sm_7x"))

    reply = view.core.answer({"id": 1, "type": "machine"})

    (kernel,) = reply["kernels"]
    assert kernel["card"]["limits"] == "sm_7x: limits unknown"
    assert ["registers per thread", "96", ""] in kernel["card"]["rows"]


def test_loading_a_deeply_nested_json_is_a_value_error_naming_the_file(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"format": 4, "record": ' + "[" * 100_000 + "]" * 100_000 + "}")

    with pytest.raises(ValueError, match=r"deep\.json is not a saved TileLab record \(JSON nested too deeply"):
        tilelab.load(path)


def test_loading_a_file_over_256_mb_is_refused_before_reading_it(tmp_path):
    path = tmp_path / "huge.json"
    with open(path, "wb") as file:
        file.truncate(sharing.MAX_RECORD_BYTES + 1)  # sparse: no disk, no memory

    with pytest.raises(ValueError, match=r"huge\.json is larger than 256 MB"):
        tilelab.load(path)


def test_loading_an_endless_device_stops_at_the_size_cap(monkeypatch):
    monkeypatch.setattr(sharing, "MAX_RECORD_BYTES", 2**20)

    with pytest.raises(ValueError, match=r"/dev/zero holds more than 1 MB"):
        tilelab.load("/dev/zero")


@pytest.mark.parametrize(("value", "kind"), [({"a": 1}, "dict"), ((1, {2}), "tuple"), ([64, 128], "list")])
def test_a_swept_value_that_is_unhashable_is_refused_before_anything_compiles(value, kind):
    from tune_kernels import scale_add

    with pytest.raises(ValueError, match=rf"^extra=.*: a swept value must be hashable, not a {kind} ") as error:
        tilelab.tune(scale_add, block=32, extra=tilelab.choices([value, "plain"]), db=":memory:", live=False)

    assert "\n" not in str(error.value)


def tilelab_cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilelab", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300
    )


FAILING_KERNEL = """
import tilelang
import tilelang.cpu.language as C


@tilelang.jit(target="c", out_idx=[-1])
def scale(N=256, block=32):
    raise NotImplementedError(f"no tiling for block={block} yet")
"""


def test_tune_into_a_place_it_cannot_write_exits_2_before_importing_the_kernel(tmp_path):
    (tmp_path / "kernels.py").write_text('raise SystemExit("imported")\n')
    (tmp_path / "rows.csv").mkdir()

    done = tilelab_cli("tune", "kernels.py::scale", "block=32,64", "--target", "c", "--out", "rows.csv", cwd=tmp_path)

    assert done.returncode == 2
    assert done.stderr == "tilelab tune: --out rows.csv: cannot write there (Is a directory)\n"


def test_a_cli_sweep_where_every_config_fails_exits_1_with_one_line_naming_the_first_failure(tmp_path):
    (tmp_path / "kernels.py").write_text(FAILING_KERNEL)

    done = tilelab_cli(
        "tune", "kernels.py::scale", "block=32,64", "--target", "c", "--db", ":memory:", "--workers", "1", cwd=tmp_path
    )

    assert done.returncode == 1, done.stderr
    assert "scale: 2/2 configs, 2 failed" in done.stdout and (tmp_path / "scale.csv").is_file()
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("tilelab tune:")]
    assert line.startswith("tilelab tune: every config failed; the first, block=32: compile_error: ")
    assert "no tiling for block=32 yet" in line


def test_a_tune_error_names_the_bad_word_and_never_an_internal_name(tmp_path):
    (tmp_path / "kernels.py").write_text(FAILING_KERNEL)

    done = tilelab_cli("tune", "kernels.py::scale", "block='32", "--target", "c", cwd=tmp_path)

    assert done.returncode == 2
    assert done.stderr == 'tilelab tune: unbalanced quote in "block=\'32"\n'


def test_a_report_failure_the_compiler_locates_nowhere_names_the_line_where_the_kernel_starts(tmp_path):
    kernels = tmp_path / "gemm_kernels.py"
    kernels.write_text((Path(__file__).parent / "kernels.py").read_text())

    done = tilelab_cli(
        "report", "gemm_kernels.py::matmul", "--arch", "sm_90", "--args", "dict(block_K=7)", cwd=tmp_path
    )

    assert done.returncode == 1
    start = _line_of("def matmul(", str(kernels)) - 1  # its decorator
    assert (
        done.stderr
        == f"tilelab report: {kernels}:{start}: Unsupported k_dim 7 (in matmul; the compiler named no line)\n"
    )


def test_the_command_line_help_says_that_report_and_tune_run_code(tmp_path):
    for command in ([], ["report"], ["tune"]):
        shown = tilelab_cli(*command, "--help", cwd=tmp_path).stdout

        assert "run code" in shown and "--args is evaluated as Python" in " ".join(shown.split())


def test_a_grid_of_more_than_1000_configs_warns_before_it_starts_and_suggests_a_search(tmp_path):
    from tune_kernels import kernel_module

    unfinished = kernel_module(tmp_path, "unfinished_kernel", "unfinished", body="raise NotImplementedError(block)")

    def stop(row):
        raise KeyboardInterrupt

    with pytest.warns(LargeSpaceWarning, match=r"^1001 configs on the grid.*search='optuna', budget=200"):
        result = tilelab.tune(
            unfinished,
            block=tilelab.choices(range(1, 1002)),
            target="c",
            db=":memory:",
            workers=1,
            live=False,
            on_row=stop,
        )

    assert result.partial and result.total == 1001


def test_a_quoted_value_on_the_magic_line_reads_as_the_value(ip):
    ip.run_cell_magic("tilelang", "--arch 'sm_80' --no-show --no-machine-code --force", gemm_cell(size=256, block=64))

    assert ip.user_ns["matmul_record"].ok and ip.user_ns["matmul_record"].arch == "sm_80"


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("--arch 'sm_80", '%%tilelang unbalanced quote in "\'sm_80"'),
        ("--args (1, 2", "%%tilelang unbalanced bracket (no closing ')') in '(1,'"),
        ("--args=[1, 2)", "%%tilelang unbalanced ')' in '--args=[1,'"),
    ],
)
def test_an_unbalanced_magic_line_is_one_usage_error_line(ip, line, says):
    with pytest.raises(UsageError) as error:
        ip.run_cell_magic("tilelang", line, "x = 1")

    assert str(error.value) == says


def test_line_forms_and_tune_lines_read_quotes_as_the_cell_magic_does(ip):
    with pytest.raises(UsageError, match=r"^no kernel called 'nope' compiled"):
        ip.run_line_magic("tilelang", "show 'nope'")
    with pytest.raises(UsageError, match=r"^%tilelang unbalanced quote in \"'nope\"$"):
        ip.run_line_magic("tilelang", "show 'nope")
    with pytest.raises(UsageError, match=r"^%tilelang unbalanced quote in \"block_M='64\"$"):
        ip.run_line_magic("tilelang", "tune matmul block_M='64 --arch sm_90")


def test_a_cluster_that_is_not_a_scheduler_address_is_one_line_and_leaves_no_client_behind():
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import tilelab
        from tune_kernels import scale_add

        try:
            tilelab.tune(scale_add, block=tilelab.choices([32, 64]), cluster="not-a-scheduler", db=":memory:", live=False)
        except ValueError as error:
            print(error)
    """)

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)

    assert done.stdout == (
        "cluster='not-a-scheduler' is not a Dask scheduler address (missing port number in address 'not-a-scheduler'); "
        "expected e.g. 'tcp://host:8786', a distributed.Client or a Dask cluster object\n"
    )
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr


def test_explore_of_a_kernel_whose_elaboration_never_returns_stops_at_its_timeout_with_one_message():
    from tune_kernels import HANG_BLOCK, scale_add

    with pytest.raises(KernelCompileError) as error:
        tilelab.explore(scale_add, block=HANG_BLOCK, target="c", timeout=1)

    record = error.value.record
    assert (
        str(error.value)
        == "TimeoutError: scale_add did not finish elaborating and lowering within 1 s (timeout= gives it longer)"
    )
    assert not record.ok and record.error.line == _line_of("time.sleep(3600)", record.error.file)
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_explore_past_its_timeout_in_the_compiler_stops_the_compiler_and_what_it_started(tmp_path, monkeypatch):
    from tilelang.contrib.cc import get_cplus_compiler
    from tune_kernels import scale_add

    compiler = tmp_path / "c++"  # a C++ compiler that never ends, and its cc1plus
    compiler.write_text(f"#!/bin/sh\necho $$ > {tmp_path}/driver\nsleep 600 &\necho $! > {tmp_path}/child\nwait\n")
    compiler.chmod(0o755)
    monkeypatch.setenv("CXX", str(compiler))
    get_cplus_compiler.cache_clear()  # TileLang looks its compiler up once a process

    try:
        with pytest.raises(KernelCompileError, match="TimeoutError: scale_add did not finish"):
            tilelab.explore(scale_add, N=1024, block=32, target="c", timeout=5, machine_code=False)
    finally:
        get_cplus_compiler.cache_clear()  # the next compile looks again, once CXX is the test runner's again

    started = [int((tmp_path / name).read_text()) for name in ("driver", "child")]  # the limit fired in the compiler
    assert all(process_ends(pid) for pid in started)


SPINNING_CELL = """
import tilelang

@tilelang.jit(target="c", out_idx=[-1])
def spin(N=64):
    while True:
        pass
"""


def test_a_cell_whose_kernel_spins_fails_at_the_magic_timeout_and_the_session_goes_on(ip):
    ip.run_cell_magic("tilelang", "--target c --timeout 1 --no-show", SPINNING_CELL)

    record = ip.user_ns["spin_record"]
    assert not record.ok and "did not finish elaborating and lowering within 1 s" in record.error.message
    assert record.error.line in (7, 8)  # the loop's lines as the editor counts them (the magic line is line 1)


def test_a_timeout_that_is_not_a_positive_number_is_refused_in_one_line(ip):
    with pytest.raises(ValueError, match=r"^timeout=0: expected a positive number of seconds"):
        tilelab.explore(object(), timeout=0)
    with pytest.raises(UsageError, match=r"^%%tilelang --timeout -1.0: expected a positive number of seconds"):
        ip.run_cell_magic("tilelang", "--timeout -1", SPINNING_CELL)
