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


def test_compiled_rows_carry_the_resources_of_the_cubin_tilelang_built(gpu_sweep):
    """Registers come from cuobjdump on TileLang's own cubin; a ptxas compile of the same source agrees."""
    from tilelab.machine.build import cubin_resource_usage, find_tool, machine_code
    from tilelab.tune.build import build, launches_of
    from tilelab.tune.resources import _library_of, embedded_cubins

    if find_tool("cuobjdump") is None:
        pytest.skip("needs cuobjdump")
    row = next(row for row in gpu_sweep.rows.values() if row.ok)
    kernel = build(gpu_sweep.kernel, gpu_sweep.args, {**gpu_sweep.fixed, **row.config}, gpu_sweep.choice)
    library = _library_of(kernel)
    (cubin,) = embedded_cubins(library.read_bytes())[:1]
    cubin_path = library.parent / "tilelab-test.cubin"
    cubin_path.write_bytes(cubin)
    try:
        usage = cubin_resource_usage(cubin_path)
    finally:
        cubin_path.unlink()
    launch = launches_of(build(gpu_sweep.kernel, gpu_sweep.args, {**gpu_sweep.fixed, **row.config}, gpu_sweep.choice), gpu_sweep.choice)

    assert row.registers == max(numbers["REG"] for numbers in usage.values()) > 0
    assert row.launchable is True and 0 < row.occupancy <= 1
    source = machine_code(kernel.get_kernel_source(), gpu_sweep.choice.arch, resources_only=True,
                          dynamic_shared_bytes=launch[0].dynamic_shared_bytes if launch else 0)  # fmt: skip
    assert source.summary()["registers"] == row.registers


def test_a_search_on_the_gpu_rebenchmarks_its_best_and_never_benchmarks_what_cannot_launch(tmp_path):
    from tune_kernels import gemm

    result = tilelab.tune(
        gemm, 4096, 4096, 4096,
        block_M=tilelab.choices([64, 128, 256]), block_N=tilelab.choices([64, 128, 256]),
        block_K=tilelab.choices([32, 64]), num_stages=tilelab.choices([2, 3, 4, 6]),
        search="optuna", budget=12, seed=0, db=tmp_path / "h.db",
    )  # fmt: skip
    rows = list(result.rows.values())

    assert len(rows) == 12 and sorted(row.trial for row in rows) == list(range(12))
    assert all(row.bench_s is None for row in rows if row.status is TuneStatus.CANNOT_LAUNCH)
    assert result.best is not None and result.best.rebench_ms is not None
    assert all(row.registers > 0 for row in rows if row.ok)
