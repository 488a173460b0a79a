"""Search analysis in tune/: best-so-far and parameter importance of a seeded study, with no view involved."""

from __future__ import annotations

import math
from dataclasses import replace

from search_objectives import evaluate, gemm_configs

from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.tune.search import SearchSettings, StudyFeed, replay
from tilelab.tune.search_analysis import MAIN_EFFECTS_SO_FAR, best_so_far, parameter_importance

SPACE = {"block_M": [32, 64, 128, 256], "block_N": [32, 64, 128, 256], "block_K": [32, 64], "num_stages": [2, 3]}
SETTINGS = SearchSettings("optuna", "optuna", 20, 0, "tpe", True)


def _result(rows, configs=None, swept=("block_M", "block_N")) -> TuneResult:
    result = TuneResult("matmul", tuple(configs or (row.config for row in rows)), swept, "cpu")
    for row in rows:
        result.add(row)
    return result


def searched() -> TuneResult:
    """A seeded TPE study of 20 trials over the GEMM model (two at a time), every trial half a second apart."""
    configs = gemm_configs(**SPACE)
    feed = StudyFeed(configs, list(SPACE), list(enumerate(configs)), [], SETTINGS, 2, True)
    rows = [replace(row, elapsed_s=0.5 * row.trial) for row in replay(feed, evaluate)]
    result = _result(rows, configs=configs, swept=tuple(SPACE))
    result.study, result.search = feed.study, SETTINGS
    result.planned = len(rows)  # as tune() plans a search: its budget of rows, not the whole space
    return result


def _row(index, latency, status=TuneStatus.OK, elapsed=None, cached=False, **config):
    return TuneRow(index, config, status, latency_ms=latency, trial=index, elapsed_s=elapsed, cached=cached)


def test_best_so_far_of_a_seeded_study_never_rises_and_ends_at_the_best():
    result = searched()

    frame = best_so_far(result)

    timed = [row for row in result.rows.values() if row.ok]
    assert list(frame["benchmark"]) == list(range(1, len(frame) + 1))
    assert list(frame["elapsed_s"]) == sorted(frame["elapsed_s"])
    best = list(frame["best_ms"].dropna())
    assert best == sorted(best, reverse=True) and best[-1] == min(row.latency_ms for row in timed)


def test_best_so_far_follows_the_benchmarks_in_the_order_they_finished():
    rows = [
        _row(0, 3.0, elapsed=2.0, block_M=1, block_N=1),
        _row(1, 2.0, elapsed=1.0, block_M=1, block_N=2),
        _row(2, 9.0, TuneStatus.PRUNED, elapsed=3.0, block_M=2, block_N=1),
        _row(3, None, TuneStatus.COMPILE_ERROR, elapsed=0.5, block_M=2, block_N=2),
        _row(4, 0.5, elapsed=None, cached=True, block_M=3, block_N=3),  # from the history: not a benchmark of this run
        _row(5, 1.0, elapsed=4.0, block_M=3, block_N=1),
    ]

    frame = best_so_far(_result(rows))

    assert list(frame["trial"]) == [1, 0, 2, 5]
    assert list(frame["best_ms"]) == [2.0, 2.0, 2.0, 1.0]  # a pruned benchmark counts, but never as the best
    assert list(frame["benchmark"]) == [1, 2, 3, 4] and list(frame["status"]) == ["ok", "ok", "pruned", "ok"]


def test_importance_of_a_seeded_study_shares_the_variance_among_the_swept_parameters():
    found, method = parameter_importance(searched())

    assert set(found) == set(SPACE) and method in ("fANOVA", "main effects")
    assert math.isclose(sum(found.values()), 1.0) and all(share >= 0 for share in found.values())
    assert parameter_importance(searched()) == (found, method)  # seeded: the same study, the same shares


def test_a_running_search_measures_importance_by_main_effects_of_the_rows_so_far():
    found, method = parameter_importance(searched(), final=False)

    assert method == MAIN_EFFECTS_SO_FAR
    assert set(found) == set(SPACE) and math.isclose(sum(found.values()), 1.0)


def test_importance_of_a_grid_comes_from_its_rows():
    rows = [_row(i, 1.0 + m + 0.01 * n, block_M=m, block_N=n) for i, (m, n) in enumerate((m, n) for m in range(3) for n in range(3))]

    found, _ = parameter_importance(_result(rows))

    assert found["block_M"] > found["block_N"]


def test_too_few_timed_configs_give_no_importance_and_say_why():
    assert parameter_importance(_result([_row(0, 1.0, block_M=1, block_N=1)])) == ({}, "needs at least 3 timed configs")
