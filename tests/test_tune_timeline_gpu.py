"""Where a GPU sweep's time goes and how far its timings can be trusted: CUDA-event timings with noise bands,
benchmarks overlapping compiles, the GPU's clocks and temperature around the sweep, a verdict on the best."""

from __future__ import annotations

import shutil

import pytest

import tilelab
from tilelab.tune.timeline import BENCH_PHASES

pytestmark = pytest.mark.gpu

M = N = K = 2048


@pytest.fixture(scope="module")
def sweep():
    import torch
    from tune_kernels import gemm

    return tilelab.tune(
        gemm, M, N, K,
        block_M=tilelab.choices([64, 128]), block_N=tilelab.choices([64, 128]), block_K=tilelab.choices([32, 64]),
        reference=lambda a, b: (a.float() @ b.float()).to(torch.float16),
        workers=2,  # four waves of compiles: benchmarks of the first waves run while later ones compile
        db=":memory:",
    )  # fmt: skip


def test_gpu_rows_are_timed_with_cuda_events_and_carry_a_noise_band(sweep):
    ok = [row for row in sweep.rows.values() if row.ok]

    assert len(ok) == 8
    for row in ok:
        assert row.timing == "cuda events" and row.repetitions >= 2
        assert row.noise_low_ms <= row.latency_median_ms <= row.noise_high_ms


def test_benchmarks_overlap_the_compiles_still_running(sweep):
    spans = sweep.timeline_record.all_spans()
    benches = [s for s in spans if s.phase in BENCH_PHASES and s.phase != "rebenchmarking"]
    compiles = [s for s in spans if s.phase == "compiling"]

    overlapping = [b for b in benches if any(c.index != b.index and c.start_s < b.end_s and b.start_s < c.end_s for c in compiles)]
    assert overlapping
    assert sweep.timeline_record.summary().bench_busy > 0


def test_the_top_configs_get_a_verdict(sweep):
    assert sweep.verdict is not None and sweep.verdict.best == sweep.best.index
    assert sweep.verdict_text().startswith(("best by ", "top "))


@pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="needs nvidia-smi (or pynvml) for clocks")
def test_the_gpu_clocks_and_temperature_are_recorded_at_the_start_and_end(sweep):
    for moment in ("start", "end"):
        state = sweep.gpu_state[moment]
        assert state["sm_clock_mhz"] > 0 and state["temperature_c"] > 0


def test_a_second_gpu_sweep_finds_its_workers_warm(sweep):
    from tune_kernels import gemm

    again = tilelab.tune(gemm, M, N, K, block_M=tilelab.choices([64, 128]), workers=2, db=":memory:", force=True, rebench=0)

    assert again.timeline_record.warm_workers == 2 and again.timeline_record.cold_workers == 0
    assert again.timeline_record.summary().first_compile_s is not None
