"""How far a timing can be trusted: the noise band of a median, and the interleaved re-benchmark of the top configs.

A config's *noise band* is the 95 % interval of the median of its repetitions,
from order statistics (the ranks the binomial distribution of "samples below
the median" puts at 2.5 % and 97.5 %): distribution-free, deterministic, no
resampling. With five samples or fewer it is the whole range, which covers the
median with less than 95 % (94 % at five).

At the end of a sweep the top configs are timed again *interleaved*: round
after round, each config gets the same short slice of calls (A B C A B C …).
Clocks, temperature and whatever else drifts between the configs' first
timings change slowly next to one round, so within a round every config sees
the same conditions. Each round's times are divided by that round's geometric
mean (drift scales every config alike, and cancels), and a config's
re-benchmark is the median of its ratios over the rounds, times the median
round level. The verdict compares the best with each other config round by
round (the paired ratio ``other / best``): "best by X % (± Y %)" when the 95 %
interval of the median ratio lies above 1, else the two are *tied*
("indistinguishable at this noise").

The timing function is the one :func:`tilelab.tune` uses, or the ``timer`` hook
it documents (``timer(config, calls) -> list of ms``), which is how the tests
drive all of this with a seeded noisy timer.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["ROUNDS", "Rebenched", "Verdict", "interleaved", "median_interval", "suspicious", "verdict_of"]

ROUNDS = 10  # rounds of the interleaved re-benchmark: at 10 the median's 95 % interval spans ranks 2..9
_EXACT_UP_TO = 200  # beyond this many samples the binomial is replaced by its normal approximation


def _lower_rank(count: int) -> int:
    """The 1-based rank ``l`` with P(Binomial(count, ½) < l) <= 2.5 %, largest such (0: none, use the range)."""
    if count > _EXACT_UP_TO:
        return max(0, math.floor(count / 2 - 1.96 * math.sqrt(count) / 2))
    total, below, rank = 2**count, 0, 0
    for k in range(count + 1):
        below += math.comb(count, k)  # P(X <= k) * 2**count
        if below * 40 > total:  # P(X <= k) > 2.5 %: rank k is the last whose P(X < rank) is within 2.5 %
            return k
        rank = k + 1
    return rank


def median_interval(samples: Sequence[float]) -> tuple[float, float]:
    """The 95 % interval of the median of ``samples`` (order statistics; the whole range for 5 samples or fewer)."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    rank = _lower_rank(len(ordered))
    if rank < 1:
        return ordered[0], ordered[-1]
    return ordered[rank - 1], ordered[len(ordered) - rank]


def suspicious(high_ms: float, best_low_ms: float | None) -> bool:
    """Whether a timing beats the best so far by more than the noise: its band's upper bound
    (``high_ms``) lies below the lower bound of the best's band (``best_low_ms``; None: no best yet)."""
    return best_low_ms is not None and high_ms < best_low_ms


@dataclass(frozen=True)
class Verdict:
    """How sure the re-benchmark is of its best: the margin to the runner-up and who is tied with the best.

    ``margin_pct`` is the median of the paired ratio runner-up / best, minus 1, in percent.
    ``noise_pct`` is how far below that median the ratio's 95 % interval reaches (so the
    best is faster by at least ``margin_pct - noise_pct``) or, for a tie, the interval's
    half-width. ``tied`` holds the indices whose interval reaches 1 (no faster or slower
    than the best at this noise), the best not included.
    """

    best: int
    runner_up: int
    margin_pct: float
    noise_pct: float
    tied: tuple[int, ...]

    def text(self) -> str:
        """One line: ``best by 3.1 % (± 0.4 %)`` or ``top 2 indistinguishable at this noise (± 1.2 %)``."""
        if self.tied:
            return f"top {len(self.tied) + 1} indistinguishable at this noise (± {self.noise_pct:.2g} %)"
        return f"best by {self.margin_pct:.2g} % (± {self.noise_pct:.2g} %)"


@dataclass(frozen=True)
class Rebenched:
    """The interleaved re-benchmark: each index's drift-corrected time (ms), and the verdict (None with one config)."""

    times_ms: dict[int, float]
    verdict: Verdict | None
    rounds: int


def interleaved(
    candidates: Sequence[int], sample: Callable[[int, int], Sequence[float]], calls: dict[int, int], rounds: int = ROUNDS
) -> Rebenched:
    """Time ``candidates`` (indices) round-robin: ``rounds`` rounds of ``sample(index, calls[index])`` each.

    ``sample(index, n)`` returns the times (ms) of ``n`` calls of that config. A round
    keeps the median of each config's calls; rounds are normalised by their geometric mean.
    """
    per_round: list[dict[int, float]] = []
    for _ in range(rounds):
        per_round.append({index: statistics.median(sample(index, calls[index])) for index in candidates})
    levels = [math.exp(statistics.fmean(math.log(max(t, 1e-12)) for t in r.values())) for r in per_round]
    level = statistics.median(levels)
    times = {index: statistics.median(r[index] / lv for r, lv in zip(per_round, levels, strict=True)) * level for index in candidates}
    return Rebenched(times, verdict_of(per_round, times) if len(candidates) > 1 else None, rounds)


def verdict_of(per_round: Sequence[dict[int, float]], times: dict[int, float]) -> Verdict:
    """The best of ``times`` against every other config, by the paired ratio of their times in each round."""
    ranked = sorted(times, key=times.__getitem__)
    best = ranked[0]
    bands = {}
    for other in ranked[1:]:
        ratios = [r[other] / r[best] for r in per_round]
        low, high = median_interval(ratios)
        bands[other] = (statistics.median(ratios), low, high)
    runner_up = ranked[1]
    middle, low, high = bands[runner_up]
    tied = tuple(other for other in ranked[1:] if bands[other][1] <= 1.0)
    noise = (high - low) / 2 if tied else middle - low
    return Verdict(best, runner_up, (middle - 1) * 100, noise * 100, tied)
