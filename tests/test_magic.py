"""%%tilelang end to end in a real IPython shell: compile, bind, cache, list/show."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import pytest
from cells import cpu_cell, fill_cell, gemm_cell
from IPython.core.error import UsageError
from IPython.display import DisplayHandle
from sample_records import failed_record, sample_record

from tilelab._magic_lines import list_records
from tilelab.machine import build as machine_build
from tilelab.records import KernelRecord, MachineCodeRecord
from tilelab.registry import Registry, default_registry

GEMM_CELL = gemm_cell()

EAGER_CELL = '''
@tilelang.jit
def eager_add(A, B, block: int = 256):
    N = T.const("N")
    A: T.Tensor[[N], T.float32]
    B: T.Tensor[[N], T.float32]
    C = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
        for i in T.Parallel(block):
            C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return C
'''


@pytest.fixture(scope="module")
def gemm_view(ip):
    return ip.run_cell_magic("tilelang", "--arch sm_90 --force", GEMM_CELL)


def test_cell_compiles_its_kernel_and_binds_kernel_and_record(ip, gemm_view):
    from tilelang.jit import JITImpl

    assert isinstance(ip.user_ns["matmul"], JITImpl)
    record = ip.user_ns["matmul_record"]
    assert isinstance(record, KernelRecord)
    assert ip.user_ns["_tl"] is record
    assert record.ok and record.arch.startswith("sm_90") and len(record.passes) >= 70
    assert default_registry().latest("matmul") == record


def test_cell_line_links_point_at_the_cells_own_lines(ip, gemm_view):
    source = ip.user_ns["matmul_record"].source
    assert source.kernel_file.startswith("<tilelang-cell-")
    assert source.kernel_source == "%%tilelang --arch sm_90 --force\n" + GEMM_CELL  # numbered as the editor numbers it
    clear_line = GEMM_CELL.splitlines().index("            T.clear(C_local)") + 2
    assert source.source_map.cuda_lines_for(clear_line)


def test_the_shown_view_has_html_and_text(gemm_view):
    bundle = gemm_view._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "text/html" in data and "matmul" in data["text/plain"]


def test_rerunning_an_unchanged_cell_is_a_cache_hit(ip, gemm_view):
    first = ip.user_ns["matmul_record"]
    ip.run_cell_magic("tilelang", "--arch sm_90 --no-show", GEMM_CELL)
    again = ip.user_ns["matmul_record"]
    assert again.from_cache and not first.from_cache
    assert again.cache_key == first.cache_key and again.passes == first.passes


def test_force_recompiles_an_unchanged_cell(ip, gemm_view):
    ip.run_cell_magic("tilelang", "--arch sm_90 --no-show --force", GEMM_CELL)
    assert not ip.user_ns["matmul_record"].from_cache


def test_other_arch_is_a_different_compile(ip, gemm_view):
    ip.run_cell_magic("tilelang", "--arch sm_80 --no-show", GEMM_CELL)
    record = ip.user_ns["matmul_record"]
    assert record.arch == "sm_80" and not record.from_cache
    assert "cp_async" in record.source.device


def test_a_kernel_whose_jit_names_the_cpu_compiles_for_it_without_target_c(ip):
    ip.run_cell_magic("tilelang", "--no-show", cpu_cell("doubled"))

    record = ip.user_ns["doubled_record"]
    assert (record.arch, record.source.language, record.launches) == ("cpu", "c", ())
    assert ip.user_ns["doubled_kernel"] is not None  # compiled, so it runs here


def test_bench_times_a_cpu_kernel_on_the_cpu_and_says_why_a_gpu_kernel_was_not_timed_without_a_gpu(ip, capsys):
    from conftest import cuda_available

    cell = cpu_cell("bench_doubled") + fill_cell("filled")
    for _ in ("compiled", "from the cell cache"):
        ip.run_cell_magic("tilelang", "--no-show --bench", cell)
        lines = dict(line.split(": ", 1) for line in capsys.readouterr().out.splitlines())

        milliseconds, how = lines["bench_doubled"].split(" ms per call ")
        assert float(milliseconds) > 0 and how.startswith("(the median, by the wall clock; ")
        if cuda_available():
            assert "ms per call (the mean, by CUDA events, the L2 flushed before each call;" in lines["filled"]
        else:
            assert lines["filled"] == "not timed: lowered for sm_90 only (no GPU)"


def test_classic_kernel_takes_args_from_the_line(ip, gemm_view):
    ip.run_cell_magic("tilelang", "--arch sm_90 --no-show --args 'dict(M=256, N=256, K=256, block_M=64)'", GEMM_CELL)
    record = ip.user_ns["matmul_record"]
    assert record.launch.grid == (2, 4, 1)
    assert record.arguments["block_M"] == "64"


def test_eager_kernel_is_explored_with_placeholders_from_args(ip, gemm_view):
    ip.run_cell("import tilelab, torch")
    args = "(tilelab.place(4096, dtype=torch.float32), tilelab.place(4096, dtype=torch.float32))"
    ip.run_cell_magic("tilelang", f"--no-show --args '{args}'", EAGER_CELL)
    record = ip.user_ns["eager_add_record"]
    assert record.ok and record.launch.grid == (16, 1, 1)


def test_changing_a_constant_the_cell_reads_is_not_a_stale_cache_hit(ip, gemm_view):
    cell = "@tilelang.jit\ndef scaled(M=SIZE):\n    @T.prim_func\n    def main(A: T.Tensor((M,), T.float32)):\n        with T.Kernel(1, threads=128) as bx:\n            for i in T.Parallel(M):\n                A[i] = 2.0\n    return main\n"
    ip.run_cell("SIZE = 128")
    ip.run_cell_magic("tilelang", "--no-show", cell)
    ip.run_cell("SIZE = 256")
    ip.run_cell_magic("tilelang", "--no-show", cell)
    assert not ip.user_ns["scaled_record"].from_cache
    assert ip.user_ns["scaled_record"].arguments == {}
    assert "256" in ip.user_ns["scaled_record"].passes[0].ir


def test_eager_kernel_without_args_says_how_to_give_them(ip, gemm_view):
    with pytest.raises(UsageError, match="eager kernel: give its tensors with --args"):
        ip.run_cell_magic("tilelang", "--no-show", EAGER_CELL)


def test_list_and_show_find_the_sessions_kernels(ip, gemm_view):
    table = ip.run_line_magic("tilelang", "list")
    assert "matmul" in set(table["name"])
    assert {"status", "arch", "passes", "compile_s"} <= set(table.columns)
    view = ip.run_line_magic("tilelang", "show matmul")
    assert view is not None
    with pytest.raises(UsageError, match="no kernel called 'nope'"):
        ip.run_line_magic("tilelang", "show nope")


def test_list_shows_whole_thread_counts_beside_a_kernel_that_has_no_launch():
    registry = Registry()
    registry.add(sample_record())  # 128 threads
    registry.add(failed_record())  # failed before it had a launch, as a CPU kernel never has one

    table = list_records(registry)

    assert table["threads"].isna().tolist() == [False, True]
    assert " 128 " in table.to_string() and "128.0" not in table.to_string()


def test_name_selects_one_kernel_of_the_cell(ip, gemm_view):
    with pytest.raises(UsageError, match="no kernel called 'other'"):
        ip.run_cell_magic("tilelang", "--name other", GEMM_CELL)


def test_importing_tilelab_stays_cheap():
    import subprocess
    import sys

    code = "import sys, tilelab; heavy = [m for m in ('tilelang', 'torch', 'IPython', 'ipywidgets', 'tvm') if m in sys.modules]; print(heavy)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


def test_tune_line_sweeps_a_kernel_of_the_session(ip, gemm_view, tmp_path, monkeypatch):
    monkeypatch.setenv("TILELAB_DB", str(tmp_path / "history.db"))
    result = ip.run_line_magic("tilelang", "tune matmul block_M=64,128 arch=sm_90")
    frame = result.to_pandas()
    assert sorted(frame["block_M"]) == [64, 128]
    assert set(frame["status"]) == {"ok"}
    with pytest.raises(UsageError, match="'block_M=' has no value"):
        ip.run_line_magic("tilelang", "tune matmul block_M=")



def test_machine_code_that_lands_while_the_explorer_is_being_shown_updates_it_only_after_it_is_shown(ip, monkeypatch):
    """The build's result arrives inside the display call (as a cache hit can): the output is shown first, widget and
    all, and only then updated with the machine code, never updated before it exists."""
    held: Future = Future()
    monkeypatch.setattr(machine_build, "start_machine_code", lambda record, kernel=None: held)
    monkeypatch.setattr(ip, "kernel", object(), raising=False)  # a kernel's front-end keeps outputs to update
    calls: list[tuple[str, object]] = []
    landings: list[threading.Thread] = []
    show, update = DisplayHandle.display, DisplayHandle.update

    def display_as_the_build_lands(handle, obj, **kwargs):
        landing = threading.Thread(target=held.set_result, args=(MachineCodeRecord("sm_90", notes=("landed",)),))
        landings.append(landing)
        landing.start()
        landing.join(timeout=2)  # it lands at once, unless the display holds it off until the output exists
        calls.append(("display", obj))
        show(handle, obj, **kwargs)

    def recorded_update(handle, obj, **kwargs):
        calls.append(("update", obj))
        update(handle, obj, **kwargs)

    monkeypatch.setattr(DisplayHandle, "display", display_as_the_build_lands)
    monkeypatch.setattr(DisplayHandle, "update", recorded_update)

    ip.run_cell_magic("tilelang", "--arch sm_90 --force", GEMM_CELL)
    [landing] = landings
    landing.join(timeout=60)

    assert not landing.is_alive()
    assert [kind for kind, _ in calls] == ["display", "update"]
    (_, shown), (_, updated) = calls
    assert updated is shown and shown.widget_open  # the same live Explorer, updated in place
    assert "landed" in shown.snapshot_bundle()["text/html"]  # what the notebook saves carries the machine code
    assert default_registry().get(shown.record.id).machine_code.notes == ("landed",)
