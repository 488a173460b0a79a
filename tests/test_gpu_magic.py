"""On a GPU: the magic really compiles the kernel, and it computes what torch does."""

from __future__ import annotations

import re

import pytest
from IPython.core.error import UsageError
from test_magic import GEMM_CELL

from tilelab.records import CompileMode

pytestmark = pytest.mark.gpu


def test_magic_compiles_and_runs_the_gemm_like_torch_matmul(ip):
    import torch

    ip.run_cell_magic("tilelang", "--no-show --force", GEMM_CELL)
    record = ip.user_ns["matmul_record"]
    assert record.ok and record.mode is CompileMode.COMPILED
    assert record.device_name == torch.cuda.get_device_name()
    assert len(record.passes) >= 70 and record.layouts["C_local"].thread is not None
    kernel = ip.user_ns["matmul_kernel"]
    a = torch.randn(1024, 1024, dtype=torch.float16, device="cuda")
    b = torch.randn(1024, 1024, dtype=torch.float16, device="cuda")
    c = kernel(a, b)
    torch.testing.assert_close(c, a @ b, atol=1e-2, rtol=1e-2)


def test_bench_flag_times_the_compiled_kernel(ip, capsys):
    ip.run_cell_magic("tilelang", "--no-show --bench", GEMM_CELL)
    assert "ms per call" in capsys.readouterr().out


def test_profile_flag_shows_and_binds_the_ncu_counters(ip):
    ip.run_cell_magic("tilelang", "--no-show --profile", GEMM_CELL)

    frame = ip.user_ns["matmul_profile"]
    assert "GPU Speed Of Light Throughput" in set(frame.section)
    assert (frame.metric == "Duration").any()


def test_profile_flag_gives_the_explorer_a_profile_tab_with_a_roofline_position(ip):
    from tilelab.registry import default_registry
    from tilelab.views import record_view
    from tilelab.views.explorer import PROFILE_TAB

    ip.run_cell_magic("tilelang", "--no-show --force --profile", GEMM_CELL)

    record = ip.user_ns["matmul_record"]
    assert record.profile is not None and ip.user_ns["matmul_profile"].attrs["summary"] == record.profile
    assert default_registry().get(record.id).profile == record.profile
    (kernel,) = record.profile.kernels
    roofline = kernel.roofline
    assert kernel.duration_s > 0 and roofline.achieved_flops_per_s > 0
    assert 0 < roofline.flops_percent < 100 and 0 < roofline.bytes_percent < 100
    core = record_view(record).core
    assert [tab["title"] for tab in core.tabs][-1] == PROFILE_TAB
    (profiled,) = core.answer({"id": 1, "type": "profile"})["kernels"]
    assert next(section for section in profiled["sections"] if section["kind"] == "roofline")["plot"]["point"]


def test_profile_flag_waits_for_the_machine_code_and_shows_the_warp_samples_on_the_cells_lines(ip):
    from tilelab.counters.stalls import place_samples
    from tilelab.views import record_view

    ip.run_cell_magic("tilelang", "--no-show --force --profile", GEMM_CELL)
    record = ip.user_ns["matmul_record"]  # the background build of TileLang's cubin, attached before the cell ended

    assert record.machine_code is not None and record.machine_code.sass
    (kernel,) = record.profile.kernels
    placed = place_samples(record, kernel)
    assert kernel.sampled > 0 and placed.unplaced == ""  # ncu ran the SASS the record lists, instruction for instruction
    assert sum(line.samples for line in placed.by_cell_line) == kernel.sampled
    cell = record.source.kernel_source.splitlines()
    sampled = {cell[line.line - 1].strip().split("(")[0] for line in placed.by_cell_line if line.line is not None}
    assert {"T.gemm", "T.copy"} <= sampled
    (shown,) = record_view(record).core.answer({"id": 1, "type": "profile"})["kernels"]
    samples = next(section for section in shown["sections"] if section["kind"] == "samples")
    assert samples["cell"] and samples["note"] == ""


def test_bench_with_another_arch_than_the_gpus_says_that_is_why_it_cannot_run(ip):
    from cells import fill_cell

    from tilelab.targets import gpu_name, resolve_target

    present = resolve_target().arch
    other = "sm_80" if not present.startswith("sm_80") else "sm_90"
    because = f"the GPU, {gpu_name()}, is {present}"

    assert resolve_target(other).lowered_because == because
    with pytest.raises(UsageError, match=re.escape(f"--bench runs the kernels, and they are lowered for {other} only ({because}); ")):
        ip.run_cell_magic("tilelang", f"--no-show --arch {other} --bench", fill_cell("other_arch_fill"))
