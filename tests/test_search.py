"""Searches that beat the grid: Optuna studies over a tuning space, failures, pruning, warm starts.

The ±2 % claims run on a deterministic objective (tests/search_objectives.py, a model of
a tiled GEMM): a search's path depends on every latency it is told, and timing noise on
a 2-core machine would make "within 2 % of the grid's best" flaky on real timings. The
search code is the real one (the study, its samplers, the feed the runner drives); only
compiling and benchmarking are replaced by the model. Real CPU sweeps below check what
does not hinge on noise: rows and trial numbers, early stops, configs that cannot launch,
the re-benchmark and warm starts.
"""

from __future__ import annotations

import pytest
from search_objectives import evaluate, gemm_configs, gemm_latency

import tilelab
from tilelab.tune.result import TuneRow, TuneStatus
from tilelab.tune.search import AUTO_THRESHOLD, SearchSettings, StudyFeed, budget_count, replay, resolve_search
from tilelab.tune.search_analysis import best_so_far
from tilelab.views.tuning import TuningView

SPACE_128 = {"block_M": [32, 64, 128, 256], "block_N": [32, 64, 128, 256], "block_K": [32, 64], "num_stages": [1, 2, 3, 4]}


def _feed(configs, sampler="tpe", seed=0, budget=None, known=(), seeds=(), width=2):
    settings = SearchSettings("optuna", "optuna", budget, seed, sampler if isinstance(sampler, str) else "custom", True)
    todo = [(i, c) for i, c in enumerate(configs) if i not in {row.index for row in known}]
    return StudyFeed(configs, list(configs[0]), todo, known, settings, width, batch=True, seeds=seeds,
                     sampler=None if isinstance(sampler, str) else sampler)  # fmt: skip


# -- on a deterministic objective ------------------------------------------------------------------------
# Measured over seeds 0-19 (budget 30 % of the space, 2 workers): TPE came within 2 % of the grid's best in
# 19 of 20 seeds on the 128-config space, the GP in 20 of 20 on the 256-config one (18 of 20 on the 128).
@pytest.mark.parametrize(
    ("sampler", "space", "seed"),
    [("tpe", SPACE_128, seed) for seed in range(5)] + [("gp", None, seed) for seed in range(3)],
    ids=[f"tpe-128-seed{seed}" for seed in range(5)] + [f"gp-256-seed{seed}" for seed in range(3)],
)
def test_a_search_of_30_percent_of_the_space_comes_within_2_percent_of_the_grid_best(sampler, space, seed):
    configs = gemm_configs(**space) if space else gemm_configs()
    grid_best = min(latency for c in configs if (latency := gemm_latency(c)) is not None)
    budget = budget_count(0.3, len(configs))

    rows = replay(_feed(configs, sampler, seed, budget), evaluate)
    found = min(row.latency_ms for row in rows if row.ok)

    assert len(configs) >= 128 and len(rows) == budget == -(-3 * len(configs) // 10)
    assert found <= 1.02 * grid_best


def test_the_grid_order_alone_would_not_get_there_on_the_same_budget():
    configs = gemm_configs(**SPACE_128)
    latencies = [gemm_latency(c) for c in configs]
    grid_best = min(x for x in latencies if x is not None)

    first = [x for x in latencies[: budget_count(0.3, len(configs))] if x is not None]

    assert min(first) > 1.02 * grid_best  # the search's 39 configs are not the grid's first 39


@pytest.mark.parametrize("seed", range(3))
def test_failures_teach_the_sampler_to_try_fewer_configs_that_cannot_launch(seed):
    configs = gemm_configs()  # 256 configs; with 64 KiB of shared memory 90 of them cannot launch

    def taught(job):
        return evaluate(job, shared_limit=64 * 1024)

    def hidden(job):  # the same failures, told as crashes of the run (which a study ignores)
        row = taught(job)
        return TuneRow(row.index, row.config, TuneStatus.CRASHED) if row.status is TuneStatus.CANNOT_LAUNCH else row

    failures = {
        name: sum(not row.ok for row in replay(_feed(configs, "tpe", seed, 64), how))
        for name, how in (("taught", taught), ("hidden", hidden))
    }

    assert failures["taught"] < failures["hidden"]


def test_every_trial_is_a_row_with_its_trial_number_and_who_chose_it():
    from optuna.trial import TrialState

    configs = gemm_configs(**SPACE_128)
    feed = _feed(configs, budget=20)

    rows = replay(feed, evaluate)

    assert [row.trial for row in rows] == list(range(20))
    assert {row.chosen_by for row in rows} == {"sampler"}
    assert len({row.index for row in rows}) == 20  # never the same config twice
    states = [trial.state for trial in feed.study.trials]
    assert states.count(TrialState.COMPLETE) == sum(row.ok for row in rows)
    assert states.count(TrialState.PRUNED) == sum(not row.ok for row in rows)


def test_config_failures_are_pruned_trials_and_crashes_failed_ones():
    from optuna.trial import TrialState

    configs = gemm_configs(**SPACE_128)
    feed = _feed(configs, budget=4)
    jobs = feed.take(2)
    rows = [
        TuneRow(jobs[0].index, jobs[0].config, TuneStatus.COMPILE_ERROR, "no"),
        TuneRow(jobs[1].index, jobs[1].config, TuneStatus.CRASHED, "worker died"),
    ]

    for row in rows:
        feed.told(row)

    first, second = feed.study.trials[:2]
    assert (first.state, first.user_attrs["status"]) == (TrialState.PRUNED, "compile_error")
    assert (second.state, second.user_attrs["status"]) == (TrialState.FAIL, "crashed")


def test_history_rows_inform_the_study_and_the_best_of_nearby_shapes_go_first():
    configs = gemm_configs(**SPACE_128)
    known = [TuneRow(i, configs[i], TuneStatus.OK, latency_ms=gemm_latency(configs[i]) or 9.0) for i in range(10)]
    nearby = [configs[100], {"block_M": 512}, configs[3]]  # a config not in the space; one already known

    feed = _feed(configs, budget=6, known=known, seeds=nearby)
    rows = replay(feed, evaluate)

    assert len(feed.study.trials) == 10 + 6
    assert [(row.index, row.chosen_by) for row in rows[:1]] == [(100, "warm start")]
    assert all(row.chosen_by == "sampler" for row in rows[1:])
    assert not {row.index for row in rows} & set(range(10))


def test_an_optuna_sampler_of_the_users_never_yields_configs_outside_the_space_or_twice():
    import optuna

    configs = [c for c in gemm_configs(**SPACE_128) if c["block_M"] * c["block_N"] <= 128 * 64]  # a `where`

    rows = replay(_feed(configs, optuna.samplers.RandomSampler(seed=1), budget=len(configs)), evaluate)

    assert sorted(row.index for row in rows) == list(range(len(configs)))
    assert {row.chosen_by for row in rows} <= {"sampler", "random"}


# -- options ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"search": "bayes"}, "search='bayes': expected one of 'grid', 'optuna', 'auto'"),
        ({"search": "optuna", "budget": 0}, "budget=0: expected at least 1 config"),
        ({"search": "optuna", "budget": 1.5}, r"budget=1.5: a fraction of the space must be in \(0, 1\]"),
        ({"search": "optuna", "budget": "10"}, "budget='10': expected a number of configs"),
        ({"search": "optuna", "seed": 1.5}, "seed=1.5: expected an int"),
        ({"search": "optuna", "sampler": "cmaes"}, "sampler='cmaes': expected one of 'tpe', 'gp', 'random'"),
        ({"search": "grid", "sampler": "tpe"}, "sampler='tpe' needs search='optuna'"),
    ],
)
def test_bad_search_options_are_one_line_errors(options, says):
    options = {"search": "grid", "budget": None, "seed": None, "sampler": None, "prune": None, **options}

    with pytest.raises(ValueError, match=says) as error:
        resolve_search(size=100, runnable=True, **options)

    assert "\n" not in str(error.value)


def test_a_search_needs_timings():
    with pytest.raises(ValueError, match="only lowers its configs: use search='grid'"):
        resolve_search("optuna", None, 0, None, None, size=100, runnable=False)


def test_auto_runs_the_grid_on_small_spaces_and_a_search_on_large_ones():
    small = resolve_search("auto", None, 0, None, None, size=AUTO_THRESHOLD, runnable=True)
    large = resolve_search("auto", None, 0, None, None, size=200, runnable=True)
    lowered = resolve_search("auto", None, 0, None, None, size=200, runnable=False)

    assert (small.kind, small.budget, small.prune) == ("grid", None, False)
    assert (large.kind, large.sampler, large.budget, large.prune) == ("optuna", "tpe", 60, True)
    assert lowered.kind == "grid"


# -- real CPU sweeps --------------------------------------------------------------------------------------
def test_a_cpu_search_measures_its_budget_and_every_trial_is_a_row(tmp_path):
    from search_kernels import axpy_repeat

    # No pruning: this tiny kernel's CPU timings vary 8x on a busy machine, and a search that stopped four of its six
    # configs early leaves its importance chart fewer than the three timed configs it needs (it says so; a clean-clone
    # run saw it). test_a_benchmark_over_twice_the_best_so_far_stops_early_and_says_why tests pruning.
    result = tilelab.tune(
        axpy_repeat, block=tilelab.choices([32, 64, 128, 256]), chunk=tilelab.choices([1, 4]), repeat=tilelab.choices([1, 2, 4]),
        search="optuna", budget=6, seed=0, prune=False, db=tmp_path / "history.db", live=False,
    )  # fmt: skip
    rows = sorted(result.rows.values(), key=lambda row: row.trial)

    assert result.total == 6 and len(rows) == 6 and result.search.describe() == "optuna (tpe, seed 0), budget 6"
    assert [row.trial for row in rows] == list(range(6)) and {row.chosen_by for row in rows} == {"sampler"}
    assert len(result.study.trials) == 6
    ok = [row for row in rows if row.ok]
    assert ok and all(row.repetitions > 1 and row.latency_min_ms <= row.latency_p90_ms for row in ok)
    assert result.best.rebench_ms is not None
    assert list(tilelab.tuning_history(axpy_repeat, db=tmp_path / "history.db").sort_values("trial")["trial"]) == list(range(6))
    charts = TuningView(result).data()["search"]["charts"]  # what the tuning view draws, live and in its snapshot
    assert len([mark for mark in charts[0]["marks"] if mark["mark"] == "dot"]) == len(best_so_far(result))
    assert len([mark for mark in charts[2]["marks"] if mark["mark"] == "rect"]) == len(result.swept)


def test_a_benchmark_over_twice_the_best_so_far_stops_early_and_says_why():
    from search_kernels import axpy_repeat

    result = tilelab.tune(axpy_repeat, repeat=tilelab.choices([1, 64]), prune=True, workers=1, db=":memory:", live=False)
    slow = result.rows[1]

    assert result.rows[0].ok
    assert slow.status is TuneStatus.PRUNED and slow.repetitions == 5
    assert slow.latency_ms > 2 * result.rows[0].latency_ms
    assert slow.error.startswith("stopped early: the first 5 calls took") and "over 2× the best so far" in slow.error


def test_a_new_shape_starts_its_search_from_the_best_config_of_a_nearby_shape(tmp_path):
    from search_kernels import axpy_repeat

    db, space = tmp_path / "history.db", {"block": tilelab.choices([32, 64, 128, 256]), "chunk": tilelab.choices([1, 4])}
    first = tilelab.tune(axpy_repeat, N=4096, **space, db=db, live=False)
    tilelab.tune(axpy_repeat, N=1 << 20, **space, db=db, live=False)  # farther away than 8192

    second = tilelab.tune(axpy_repeat, N=8192, **space, search="optuna", budget=3, seed=0, db=db, live=False)
    opening = min(second.rows.values(), key=lambda row: row.trial)

    assert opening.chosen_by == "warm start" and opening.trial == 0
    assert opening.config == first.best_config


def test_configs_that_cannot_launch_are_never_benchmarked():
    """A CUDA target that claims to run here (there is no GPU): every benchmark the runner
    attempts becomes a ``run_error`` row, so attempts are visible; the config over sm_80's
    shared memory is a ``cannot_launch`` row that never got one."""
    from tune_kernels import gemm

    from tilelab.machine.build import find_tool
    from tilelab.targets import TargetChoice
    from tilelab.tune.build import spec_of
    from tilelab.tune.result import TuneResult
    from tilelab.tune.runner import Sweep, run_sweep

    if find_tool("nvcc") is None:
        pytest.skip("needs nvcc: the runnable CUDA target compiles")
    choice = TargetChoice({"kind": "cuda", "arch": "sm_80"}, "sm_80", True, "no GPU")
    configs = ({"block_M": 64, "block_N": 64}, {"block_M": 64, "block_N": 64, "block_K": 64, "num_stages": 12})
    result = TuneResult("gemm", configs, ("block_M", "block_N"), "no GPU", gemm, (256, 256, 256), {}, choice)
    sweep = Sweep(gemm, spec_of(gemm), (256, 256, 256), {}, choice, timeout=300, prune=True)

    run_sweep(sweep, result, list(enumerate(configs)), lambda row: None)
    attempted, too_big = result.rows[0], result.rows[1]

    assert attempted.status in (TuneStatus.RUN_ERROR, TuneStatus.OK) and attempted.bench_s is not None
    assert attempted.registers > 0
    assert too_big.status is TuneStatus.CANNOT_LAUNCH and too_big.bench_s is None and too_big.latency_ms is None
    assert "exceeds sm_80's limit" in too_big.error
    assert result.benchmarked == 1


def test_the_nearby_shape_gives_the_config_its_re_benchmark_found_fastest(tmp_path):
    """The seed is the config ``TuneResult.best`` names: the fastest re-benchmark, not the sweep's
    fastest first timing (on a noisy machine the two differ)."""
    from tilelab.tune.result import TuneRow, TuneStatus
    from tilelab.tune.store import RunKey, TuningStore

    store = TuningStore(tmp_path / "history.db")
    nearby = RunKey.of("axpy", "source", "N=4096", "c", "cpu")
    timed = [({"block": 32}, 1.0, 1.3), ({"block": 64}, 1.1, 1.2), ({"block": 128}, 1.4, None)]
    for config, latency_ms, rebench_ms in timed:
        store.write(nearby, "run-1", TuneRow(0, config, TuneStatus.OK, latency_ms=latency_ms, rebench_ms=rebench_ms))

    assert store.nearby(RunKey.of("axpy", "source", "N=8192", "c", "cpu")) == [{"block": 64}]
