"""One sweep loop for every engine: the same sweep on this machine's compile workers and on a Dask
LocalCluster gives the same rows, confirms the same suspiciously fast timing, re-benchmarks the top
configs interleaved with a verdict, and stops at a wall-clock budget. Real CPU kernels; the timings
come from a seeded fake timer (tune()'s ``timer`` hook), which travels to the Dask benchmark worker.
"""

from __future__ import annotations

import os

import pytest
from nanny_environment import changed_names, environment_once_no_nanny_is_starting_a_worker
from tune_kernels import scale_add
from tune_timers import FlukeTimer

import tilelab
from tilelab.tune.dask_connect import workers_of

BLOCKS = [0, 32, 64, 128]  # 0 fails to lower
TRUE_MS = {32: 1.0, 64: 2.0, 128: 1.2}


@pytest.fixture(scope="module")
def started():
    """A Dask LocalCluster with one compile thread and one CPU benchmark worker (configs go in grid order), and
    this process's environment before and after it started."""
    import tilelab.cluster

    before = dict(os.environ)
    client = tilelab.cluster.local(gpus=0, compile_threads=1)
    try:
        client.wait_for_workers(2, timeout=120)
        yield client, before, dict(os.environ)
    finally:
        client.shutdown()


@pytest.fixture(scope="module")
def cluster(started):
    return started[0]


def test_starting_a_local_cluster_leaves_the_environment_of_this_process_as_it_was(started):
    client, before, after = started
    workers_environment = client.run(lambda: dict(os.environ))

    assert changed_names(before, after) == set()  # Dask's nannies run here and set their workers' variables before each starts
    assert all(env.get("OMP_NUM_THREADS") == "1" and env.get("PYTHONHASHSEED") for env in workers_environment.values())


def test_a_worker_its_nanny_restarts_leaves_the_environment_of_this_process_as_it_was(cluster):
    before = dict(os.environ)

    cluster.restart_workers([_cpu_bench_worker(cluster)], timeout=120)
    cluster.wait_for_workers(2, timeout=120)

    after = environment_once_no_nanny_is_starting_a_worker(before)
    assert changed_names(before, after) == set()
    restarted = cluster.run(lambda: os.environ.get("OMP_NUM_THREADS"), workers=[_cpu_bench_worker(cluster)])
    assert list(restarted.values()) == ["1"]


def _cpu_bench_worker(client) -> str:
    workers = workers_of(client)
    return next(address for address, worker in workers.items() if "CPU_BENCH" in worker["resources"])


def _tune(**kwargs):
    timer = FlukeTimer(TRUE_MS, fluke=64, fast=0.5)  # block 64 is lucky at first: 0.5 ms, truly 2 ms
    return tilelab.tune(
        scale_add, block=tilelab.choices(BLOCKS), reference=lambda a, b: 2 * a + b, timer=timer, timeout=60, db=":memory:", **kwargs
    )


@pytest.fixture(scope="module")
def sweeps(cluster):
    return {"local": _tune(workers=1), "dask": _tune(cluster=cluster)}


def _by_block(result) -> dict:
    return {row.config["block"]: row for row in result.rows.values()}


def test_both_engines_give_the_same_statuses(sweeps):
    statuses = {name: {block: row.status.value for block, row in _by_block(result).items()} for name, result in sweeps.items()}

    assert statuses["local"] == statuses["dask"] == {0: "compile_error", 32: "ok", 64: "ok", 128: "ok"}
    assert not sweeps["dask"].partial and sweeps["dask"].device.startswith("cpu: ")


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_both_engines_confirm_a_suspiciously_fast_first_timing(sweeps, engine):
    result = sweeps[engine]
    rows = _by_block(result)

    assert rows[64].first_ms == pytest.approx(0.5)  # it beat the best (32: 1 ms) by far more than the noise
    assert rows[64].latency_ms == pytest.approx(2.0)  # timed again: the slower timing stands
    assert rows[32].first_ms is None and rows[128].first_ms is None
    assert rows[64].timing == "timer FlukeTimer"
    confirming = result.timeline().query("phase == 'confirming'")
    assert list(confirming["block"]) == [64]


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_both_engines_rebenchmark_the_top_configs_interleaved_and_give_a_verdict(sweeps, engine):
    result = sweeps[engine]
    rows = _by_block(result)

    assert {block: rows[block].rebench_ms for block in TRUE_MS} == pytest.approx(TRUE_MS)
    assert result.best.config == {"block": 32} and result.verdict.best == rows[32].index
    assert result.verdict_text() == sweeps["local"].verdict_text() == "best by 20 % (± 0 %)"
    assert len(result.timeline().query("phase == 'rebenchmarking'")) == 3


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_both_engines_stop_at_a_spent_wall_clock_budget(cluster, engine):
    where = {"workers": 1} if engine == "local" else {"cluster": cluster}

    result = _tune(budget="1ms", **where)  # spent before the first config is taken

    assert result.budget_reached and result.done == 0 and not result.partial
    assert result.coverage().startswith("budget of 0.001 s reached: no config started after it; 0 of 4 configs")


def test_both_engines_implement_every_method_the_loop_calls():
    from tilelab.tune.dask_engine import DaskEngine
    from tilelab.tune.engine import Engine
    from tilelab.tune.local_engine import LocalEngine

    wanted = {name for name in vars(Engine) if not name.startswith("_")} | set(Engine.__annotations__)

    for engine in (LocalEngine, DaskEngine):
        assert wanted <= set(dir(engine)), engine.__name__
