"""Tuning on a real GPU: a small GEMM space compiled in workers, benchmarked here."""

from __future__ import annotations

import pytest

import tilelab
from tilelab.tune.result import TuneStatus

pytestmark = pytest.mark.gpu

M = N = K = 1024


@pytest.fixture(scope="module")
def gpu_sweep(tmp_path_factory):
    import torch
    from tune_kernels import gemm

    return tilelab.tune(
        gemm, M, N, K,
        block_M=tilelab.choices([64, 128]),
        block_N=tilelab.choices([64, 128]),
        block_K=tilelab.choices([32, 64]),
        reference=lambda a, b: (a.float() @ b.float()).to(torch.float16),
        flops=2 * M * N * K,
        db=tmp_path_factory.mktemp("gpu") / "history.db",
    )  # fmt: skip


def test_small_gemm_space_is_all_ok_on_the_gpu(gpu_sweep):
    frame = gpu_sweep.to_pandas()

    assert len(frame) == 8
    assert set(frame["status"]) == {TuneStatus.OK.value}, frame[["status", "error"]]
    assert frame["latency_ms"].gt(0).all() and frame["tflops"].gt(0).all()
    assert gpu_sweep.device.startswith("NVIDIA")


def test_best_kernel_matches_torch_matmul(gpu_sweep):
    import torch

    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)

    torch.testing.assert_close(gpu_sweep.best_kernel(a, b), a @ b, rtol=1e-2, atol=1e-2)


def test_a_config_that_computes_wrong_results_is_a_mismatch(tmp_path):
    from tune_kernels import gemm

    result = tilelab.tune(gemm, M, N, K, block_M=tilelab.choices([64, 128]), reference=lambda a, b: a @ b + 1, db=tmp_path / "h.db")

    assert {row.status for row in result.rows.values()} == {TuneStatus.MISMATCH}
    assert all("max abs diff" in row.error for row in result.rows.values())
