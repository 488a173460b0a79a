"""Tuning on a Dask cluster, end to end on the CPU: two "hosts", real CPU kernels, a real PostgreSQL history.

Host A is ``tilelab.cluster.local(gpus=0)``: a LocalCluster with a compile worker
and a CPU benchmark worker. Host B is a second worker process group started the
way a user starts one on another machine (``dask worker ADDRESS --resources
CPU_BENCH=1``), in its own session.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from tune_kernels import SLOW_BLOCK

import tilelab
from tilelab.tune.dask_connect import workers_of
from tilelab.tune.result import TuneStatus

BLOCKS = [96, 0, 32, 64]  # 96 hangs in elaboration (tune_kernels.HANG_BLOCK), 0 fails to lower
TIMEOUT_S = 5


@pytest.fixture
def postgres(postgres_server):
    return postgres_server


@pytest.fixture(scope="module")
def cluster():
    """A client of host A's LocalCluster, with host B's worker joined to it."""
    import tilelab.cluster

    client = tilelab.cluster.local(gpus=0, compile_threads=2)
    host_b = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", client.scheduler.address, "--name", "host-b",
         "--nthreads", "1", "--resources", "CPU_BENCH=1", "--no-dashboard", "--host", "127.0.0.1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        client.wait_for_workers(3, timeout=120)
        yield client
    finally:
        os.killpg(host_b.pid, signal.SIGTERM)
        host_b.wait(timeout=60)
        client.shutdown()


def _sweep(cluster, db, blocks, timeout=TIMEOUT_S, **kwargs):
    from tune_kernels import scale_add

    return tilelab.tune(
        scale_add, block=tilelab.choices(blocks), chunk=tilelab.choices([1, 4]),
        where=lambda c: c["block"] not in (0, 96, SLOW_BLOCK) or c["chunk"] == 1,
        reference=lambda a, b: 2 * a + b, bytes=3 * 4096 * 4, timeout=timeout, cluster=cluster, db=db, **kwargs,
    )  # fmt: skip


def _tasks_left(cluster, limit_s: float = 10.0) -> list[str]:
    """TileLab's tasks still on the cluster once cancelled tasks have had ``limit_s`` to go."""
    deadline = time.monotonic() + limit_s
    while True:
        left = [key for keys in cluster.processing().values() for key in keys if str(key).startswith("tilelab-")]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def _compile_processes(cluster) -> int:
    from tilelab.tune.dask_tasks import compile_processes

    return sum(cluster.run(compile_processes).values())


def _statuses(result) -> dict:
    return {(row.config["block"], row.config["chunk"]): row.status.value for row in result.ordered_rows()}


def test_a_sweep_over_two_hosts_returns_every_row_and_stores_them_in_postgres(cluster, postgres):
    from distributed import get_task_stream

    db = postgres.database()
    with get_task_stream(cluster) as stream:
        result = _sweep(cluster, db, [0, 16, 32, 64])

    history = tilelab.tuning_history("scale_add", db=db)
    benched_on = {task["worker"] for task in stream.data if str(task["key"]).startswith("tilelab-bench-")}
    compiled_on = {task["worker"] for task in stream.data if str(task["key"]).startswith("tilelab-compile-")}
    host_b = next(a for a, w in workers_of(cluster).items() if w["name"] == "host-b")

    assert _statuses(result) == {(0, 1): "compile_error", **{(b, c): "ok" for b in (16, 32, 64) for c in (1, 4)}}
    assert result.device.startswith("cpu: ") and not result.partial
    assert all(row.latency_ms > 0 and row.gbps > 0 and row.device == result.device for row in result.rows.values() if row.ok)
    assert sorted(zip(history["block"], history["chunk"], history["status"], strict=True)) == sorted(
        (b, c, s) for (b, c), s in _statuses(result).items()
    )
    assert host_b in benched_on and host_b not in compiled_on  # the second host benchmarks; compiles stay off it
    assert _compile_processes(cluster) == 0


def test_killing_a_worker_mid_sweep_loses_no_finished_row(cluster, postgres):
    db = postgres.database()
    seen, killed = [], []

    def kill_the_hung_compile_worker(row):
        seen.append(row)
        if killed:
            return
        holding = cluster.processing()
        address = next(a for a, keys in holding.items() for k in keys if str(k).startswith("tilelab-compile-") and str(k).split("-")[3] == "0")
        pid = cluster.run(os.getpid, workers=[address])[address]
        os.kill(pid, signal.SIGKILL)
        killed.append((address, list(seen)))

    result = _sweep(cluster, db, BLOCKS, on_row=kill_the_hung_compile_worker)

    address, before = killed[0]
    lost = [row for row in seen if row.status is TuneStatus.WORKER_LOST]
    assert _statuses(result) == {(96, 1): "timeout", (0, 1): "compile_error", **{(b, c): "ok" for b in (32, 64) for c in (1, 4)}}
    assert all(result.rows[row.index] == row for row in before)  # every row finished before the kill is kept as it was
    assert [row.index for row in lost].count(0) == 1 and "retried" in lost[0].error
    assert all(address in row.error for row in lost)  # the hung compile's, and any result that went with the worker
    assert f"within {TIMEOUT_S} s" in result.rows[0].error  # the retry ran elsewhere, and hung there too
    stored = tilelab.tuning_history("scale_add", db=db)
    assert sorted(stored["status"]) == sorted(_statuses(result).values())


def test_a_compile_result_lost_with_its_worker_before_it_was_read_is_retried_elsewhere(cluster):
    seen, killed = [], []

    def kill_the_compile_worker_holding_an_unread_result(row):
        seen.append(row)
        if killed:
            return
        address, index = _a_compile_result_held(cluster, besides={row.index})  # the sweep waits on this callback
        os.kill(cluster.run(os.getpid, workers=[address])[address], signal.SIGKILL)
        killed.append((address, index))

    # No compile here should time out: the slow one (3 s) may be retried on the restarted worker, which starts
    # TileLang cold, and under a loaded 2-core run that took it past TIMEOUT_S (a clean-clone run saw "timeout").
    result = _sweep(cluster, ":memory:", [0, SLOW_BLOCK], timeout=120, on_row=kill_the_compile_worker_holding_an_unread_result)

    (address, index), = killed
    lost = [row for row in seen if row.status is TuneStatus.WORKER_LOST]
    assert _statuses(result) == {(0, 1): "compile_error", (SLOW_BLOCK, 1): "ok"}
    assert index in {row.index for row in lost}  # and any compile sent to the worker before its loss was known
    assert all(address in row.error and "retried" in row.error for row in lost)
    assert result.rows[index].ok  # compiled again on the restarted worker


def _a_compile_result_held(cluster, besides: set[int], limit_s: float = 60.0) -> tuple[str, int]:
    """The first compile worker found holding the result of a config not in ``besides``, and that config."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        for address, keys in cluster.has_what().items():
            held = {int(parts[3]) for parts in (str(key).split("-") for key in keys) if parts[1] == "compile"} - besides
            if held:
                return address, min(held)
        time.sleep(0.05)
    raise AssertionError(f"no compile finished within {limit_s:g} s")


def test_an_interrupt_cancels_the_cluster_tasks_and_keeps_finished_rows(cluster, postgres):
    def interrupt(row):
        raise KeyboardInterrupt

    partial = _sweep(cluster, postgres.database(), BLOCKS, on_row=interrupt)

    assert partial.partial and not partial.running
    assert partial.rows[1].status is TuneStatus.COMPILE_ERROR  # the row that was being reported stays
    assert 0 not in partial.rows or partial.rows[0].status is not TuneStatus.TIMEOUT  # the hung compile: not waited for
    assert _tasks_left(cluster) == []
    assert _compile_processes(cluster) == 0


CELL = '''
import tilelang
import tilelang.cpu.language as C
import tilelab

SCALE = 3.0

@tilelang.jit(target="c", out_idx=[-1])
def cell_scale(N=1024, block=64):
    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            for i in C.serial(block):
                Out[bx * block + i] = A[bx * block + i] * SCALE

    return main

result = tilelab.tune(cell_scale, block=tilelab.choices([32, 64]), reference=lambda a: a * SCALE, db=":memory:", cluster=ADDRESS)
'''


def test_a_kernel_defined_in_a_notebook_cell_tunes_on_the_cluster_by_its_address(cluster):
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.user_ns["ADDRESS"] = cluster.scheduler.address
    shell.run_cell(CELL).raise_error()
    result = shell.user_ns["result"]

    assert [row.status for row in result.ordered_rows()] == [TuneStatus.OK, TuneStatus.OK]


def test_a_cpu_kernel_on_a_cluster_without_a_cpu_benchmark_worker_is_one_line():
    import distributed
    from tune_kernels import scale_add

    with (
        distributed.LocalCluster(n_workers=1, processes=False, dashboard_address="127.0.0.1:0") as bare,
        distributed.Client(bare) as client,
        pytest.raises(ValueError, match="declares the CPU_BENCH resource") as error,
    ):
        tilelab.tune(scale_add, block=tilelab.choices([32, 64]), cluster=client, db=":memory:")

    assert "\n" not in str(error.value) and "--resources CPU_BENCH=1" in str(error.value)


def test_more_gpus_than_visible_is_refused(monkeypatch):
    import tilelab.cluster

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(ValueError, match=r"gpus=1: this machine shows 0 GPU\(s\)"):
        tilelab.cluster.local(gpus=1)


def test_a_missing_optional_dependency_names_the_extra():
    from tilelab._extras import MissingExtraError, require

    with pytest.raises(MissingExtraError, match=r"pip install 'tilelab\[cluster\]'"):
        require("tilelab_no_such_module", "tune(cluster=...)")


def test_benchmark_workers_of_two_device_models_are_refused_in_one_line():
    from tilelab.tune.dask_connect import ClusterError, one_device

    same = {"tcp://10.0.0.1:4001": "NVIDIA H200", "tcp://10.0.0.2:4001": "NVIDIA H200"}
    mixed = {**same, "tcp://10.0.0.3:4001": "NVIDIA H100 80GB HBM3"}

    assert one_device("GPU", same) == "NVIDIA H200"
    with pytest.raises(ClusterError, match=r"different devices: NVIDIA H200 .*, NVIDIA H100 80GB HBM3 .*10\.0\.0\.3") as error:
        one_device("GPU", mixed)
    assert "\n" not in str(error.value)


def test_the_workers_of_a_cluster_are_all_there_however_often_the_client_refreshes_its_cached_identity():
    import dask
    from distributed import Client, LocalCluster

    # the client's periodic refresh caches an identity without workers: refreshed every 1 ms, it made
    # client.scheduler_info() read an empty cluster in about one call in ten (at the default 2 s, stop 40's CI)
    with dask.config.set({"distributed.client.scheduler-info-interval": "1ms"}), LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as local, Client(local, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
        seen = [len(workers_of(client)) for _ in range(1000)]

    assert set(seen) == {2}
