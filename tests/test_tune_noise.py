"""Timings you can trust, without a compile: the noise band of a median, the verdict of the interleaved
re-benchmark of the top configs, and when a timing is too good to take on faith. Seeded fake timers
(tests/tune_timers.py) in place of a GPU."""

from __future__ import annotations

import statistics

import pytest
from tune_timers import DriftingTimer, SteadyTimer

from tilelab.tune.noise import Verdict, interleaved, median_interval, suspicious

TRUE = {32: 1.00, 64: 1.02, 128: 1.04}  # the true best is block 32, 2 % ahead of the next
CALLS = dict.fromkeys(TRUE, 5)


def _first_timings(timer, order) -> dict:
    """Each config timed once, one after another, as a sweep's first benchmarks are: block -> median (ms)."""
    return {block: statistics.median(timer({"block": block}, 50)) for block in order}


def _interleaved(timer, true=TRUE):
    return interleaved(list(true), lambda block, calls: timer({"block": block}, calls), dict.fromkeys(true, 5))


def test_the_median_interval_of_ten_samples_spans_their_second_to_ninth_smallest():
    samples = [7.0, 1.0, 9.0, 3.0, 5.0, 2.0, 10.0, 4.0, 8.0, 6.0]

    assert median_interval(samples) == (2.0, 9.0)


def test_five_samples_or_fewer_give_their_whole_range():
    assert median_interval([3.0, 1.0, 2.0, 5.0, 4.0]) == (1.0, 5.0)
    assert median_interval([2.5]) == (2.5, 2.5)


def test_a_large_sample_has_a_narrow_interval_around_its_median():
    samples = [1.0 + (i % 100) / 1000 for i in range(10_000)]

    low, high = median_interval(samples)

    assert low <= statistics.median(samples) <= high and high - low <= 0.003


def test_the_interleaved_rebenchmark_names_the_true_best_where_first_timings_do_not():
    first_right = interleaved_right = 0
    for seed in range(100):
        order = [64, 32, 128] if seed % 2 else [128, 64, 32]
        first = _first_timings(DriftingTimer(TRUE, seed), order)
        found = _interleaved(DriftingTimer(TRUE, seed))
        first_right += min(first, key=first.get) == 32
        interleaved_right += min(found.times_ms, key=found.times_ms.get) == 32

    assert interleaved_right >= 95
    assert first_right < 80  # drift between the first timings misleads them


def test_configs_of_the_same_speed_are_reported_as_a_tie():
    same = {32: 1.0, 64: 1.0}
    verdicts = [_interleaved(DriftingTimer(same, seed), same).verdict for seed in range(20)]

    assert sum(bool(verdict.tied) for verdict in verdicts) >= 19
    tie = next(verdict for verdict in verdicts if verdict.tied)
    assert tie.text().startswith("top 2 indistinguishable at this noise (± ")


def test_a_clear_winner_is_best_by_its_margin_and_never_a_tie():
    apart = {32: 1.0, 64: 1.1}
    for seed in range(20):
        verdict = _interleaved(DriftingTimer(apart, seed), apart).verdict

        assert verdict.best == 32 and verdict.runner_up == 64 and verdict.tied == ()
        assert 7 < verdict.margin_pct < 13 and verdict.text().startswith("best by ")


def test_the_verdict_says_how_far_the_margin_may_fall():
    verdict = Verdict(best=0, runner_up=1, margin_pct=3.14159, noise_pct=0.4, tied=())

    assert verdict.text() == "best by 3.1 % (± 0.4 %)"


def test_the_rebenchmark_cancels_drift_that_scales_every_config_alike():
    steady = _interleaved(SteadyTimer(TRUE, noise=0.0))

    assert steady.times_ms == pytest.approx(TRUE)
    assert steady.verdict.margin_pct == pytest.approx(2.0)


def test_a_timing_is_suspicious_only_when_its_whole_band_is_below_the_best():
    assert suspicious(high_ms=0.95, best_low_ms=0.98)
    assert not suspicious(high_ms=0.99, best_low_ms=0.98)  # the bands overlap: within the noise
    assert not suspicious(high_ms=0.5, best_low_ms=None)  # nothing to beat yet
