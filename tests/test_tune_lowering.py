"""A CUDA GEMM swept without a GPU: lowered for sm_90 in worker processes, compile status per config."""

from __future__ import annotations

import pytest

import tilelab
from tilelab.tune.result import TuneStatus


@pytest.fixture(scope="module")
def lowered(tmp_path_factory):
    import torch
    from tune_kernels import gemm

    if torch.cuda.is_available():
        pytest.skip("lowering-only sweeps happen where there is no GPU")
    db = tmp_path_factory.mktemp("lowering") / "history.db"
    return tilelab.tune(gemm, 1024, 1024, 1024, block_M=tilelab.choices([64, 128]), threads=tilelab.choices([96, 128]), arch="sm_90", db=db)


def test_cuda_gemm_sweep_records_compile_status_per_config(lowered):
    statuses = {(row.config["block_M"], row.config["threads"]): row.status for row in lowered.rows.values()}

    assert statuses == {
        (64, 96): TuneStatus.COMPILE_ERROR,
        (64, 128): TuneStatus.OK,
        (128, 96): TuneStatus.COMPILE_ERROR,
        (128, 128): TuneStatus.OK,
    }
    assert not lowered.runnable and lowered.device == "none (lowered for sm_90)"


def test_lowered_rows_have_compile_times_and_no_latency(lowered):
    frame = lowered.to_pandas()

    assert frame["compile_s"].gt(0).all()
    assert frame["latency_ms"].isna().all()
    assert lowered.best is None
    assert all("warp" in row.error for row in lowered.rows.values() if not row.ok)


def test_a_lowered_sweep_has_no_best_kernel(lowered):
    with pytest.raises(ValueError, match="only lowered"):
        _ = lowered.best_kernel


def test_record_drills_down_into_one_config(lowered):
    from tilelab.errors import KernelCompileError

    record = lowered.record({"block_M": 64, "threads": 128})
    with pytest.raises(KernelCompileError) as failed:
        lowered.record(next(row for row in lowered.rows.values() if not row.ok))

    assert record.ok and record.lowered_only and record.arch == "sm_90"
    assert record.arguments["block_M"] == "64"
    assert not failed.value.record.ok
