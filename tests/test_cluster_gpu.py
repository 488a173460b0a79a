"""``tilelab.cluster.local(gpus=1)`` on a real GPU: a GEMM sweep benchmarked by the cluster's GPU worker, and a
notebook whose environment stays as it was while that worker starts and restarts."""

from __future__ import annotations

import os

import pytest
from nanny_environment import changed_names, environment_once_no_nanny_is_starting_a_worker

import tilelab
from tilelab.tune.dask_connect import workers_of
from tilelab.tune.result import TuneStatus

pytestmark = pytest.mark.gpu

M = N = K = 1024


@pytest.fixture(scope="module")
def started():
    """A local cluster with one GPU worker, and this process's environment before and after it started."""
    import tilelab.cluster

    before = dict(os.environ)
    client = tilelab.cluster.local(gpus=1, compile_threads=2)
    try:
        yield client, before, dict(os.environ)
    finally:
        client.shutdown()


def _gpu_worker(client) -> str:
    return next(address for address, worker in workers_of(client).items() if "GPU" in worker["resources"])


def test_a_gemm_sweep_on_the_clusters_gpu_worker_is_all_ok_and_names_the_gpu(started):
    import torch
    from tune_kernels import gemm

    client, _, _ = started
    result = tilelab.tune(
        gemm, M, N, K,
        block_M=tilelab.choices([64, 128]),
        block_N=tilelab.choices([64, 128]),
        reference=lambda a, b: (a.float() @ b.float()).to(torch.float16),
        flops=2 * M * N * K, cluster=client, db=":memory:",
    )  # fmt: skip

    frame = result.to_pandas()
    assert set(frame["status"]) == {TuneStatus.OK.value}, frame[["status", "error"]]
    assert frame["latency_ms"].gt(0).all() and result.device.startswith("NVIDIA")


def test_the_gpu_worker_sees_its_gpu_alone_and_the_notebooks_environment_is_unchanged(started):
    client, before, after = started

    assert changed_names(before, after) == set()
    first_gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
    seen = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"), workers=[_gpu_worker(client)])
    assert list(seen.values()) == [first_gpu]


def test_restarting_the_gpu_worker_leaves_the_notebooks_environment_as_it_was(started):
    client, _, _ = started
    before = dict(os.environ)

    client.restart_workers([_gpu_worker(client)], timeout=120)
    client.wait_for_workers(3, timeout=120)

    after = environment_once_no_nanny_is_starting_a_worker(before)
    assert changed_names(before, after) == set()
    assert list(client.run(lambda: os.environ.get("OMP_NUM_THREADS"), workers=[_gpu_worker(client)]).values()) == ["1"]
