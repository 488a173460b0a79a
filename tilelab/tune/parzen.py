"""TPE's score ``log l(x) − log g(x)`` over the configs of a space, written against Optuna's public types only.

Optuna's TPE keeps its split of trials and its Parzen estimators private, and they
changed shape between releases. This is the same rule, small enough to own:

- trials split into "good" (the best ``min(⌈0.1 n⌉, 25)``: complete by value, then
  stopped-early ones by how far they got, failures last) and "bad" (the rest, and every
  running trial, as TPE's constant liar does);
- each group is a mixture with one kernel per trial (weights ramp up for the newest
  past 25) plus a flat prior of weight 1: on an ordered parameter (an index over sorted
  numbers) a normal kernel, discretised to the integers, whose width is the distance to
  the trial's neighbours, clipped to ``[range / min(100, kernels + 1), range]``; on a
  category, the trial's value with weight 1 plus ``1 / kernels`` on every value.

Optuna 5.0's defaults give the same numbers (prior weight 1, magic clip on, endpoints off).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from optuna.distributions import CategoricalDistribution, IntDistribution
from optuna.trial import FrozenTrial, TrialState

__all__ = ["split_good_bad", "tpe_score"]


def _gamma(finished: int) -> int:
    return min(math.ceil(0.1 * finished), 25)


def _weights(n: int) -> np.ndarray:
    if n < 25:
        return np.ones(n)
    return np.concatenate([np.linspace(1.0 / n, 1.0, num=n - 25), np.ones(25)])


def _stopped_rank(trial: FrozenTrial) -> tuple[float, float]:
    """Stopped early: further is better, then faster; failures (no step) last."""
    if not trial.intermediate_values:
        return 1.0, 0.0
    step, value = max(trial.intermediate_values.items())
    return -step, float("inf") if math.isnan(value) else value


def split_good_bad(trials: Sequence[FrozenTrial]) -> tuple[list[FrozenTrial], list[FrozenTrial]]:
    """TPE's split of minimised ``trials`` into the good and the rest, each in trial order."""
    complete = sorted((t for t in trials if t.state is TrialState.COMPLETE), key=lambda t: t.value)
    stopped = sorted((t for t in trials if t.state is TrialState.PRUNED), key=_stopped_rank)
    running = [t for t in trials if t.state is TrialState.RUNNING]
    wanted = _gamma(len(complete) + len(stopped))
    ranked = complete + stopped
    good, bad = ranked[:wanted], ranked[wanted:] + running
    return sorted(good, key=lambda t: t.number), sorted(bad, key=lambda t: t.number)


def _phi(u: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.vectorize(math.erf)(u / math.sqrt(2.0)))


def _ordered_log_mass(observed: np.ndarray, low: int, high: int, candidates: np.ndarray) -> np.ndarray:
    """log P(candidate) under each kernel (rows) and the prior (last row): discretised, truncated normals."""
    lo, hi = low - 0.5, high + 0.5
    order = np.argsort(observed)
    padded = np.concatenate([[lo], observed[order], [hi]])
    widths = np.maximum(padded[1:-1] - padded[:-2], padded[2:] - padded[1:-1])
    if len(padded) >= 4:
        widths[0], widths[-1] = padded[2] - padded[1], padded[-2] - padded[-3]
    sigmas = np.empty_like(widths)
    sigmas[order] = widths
    sigmas = np.clip(sigmas, (hi - lo) / min(100.0, len(observed) + 2.0), hi - lo)
    mus = np.append(observed, 0.5 * (lo + hi))[:, None]
    sigmas = np.append(sigmas, hi - lo)[:, None]
    mass = _phi((candidates[None, :] + 0.5 - mus) / sigmas) - _phi((candidates[None, :] - 0.5 - mus) / sigmas)
    total = _phi((hi - mus) / sigmas) - _phi((lo - mus) / sigmas)
    return np.log(np.maximum(mass, 1e-300)) - np.log(np.maximum(total, 1e-300))


def _category_log_mass(observed: np.ndarray, choices: int, candidates: np.ndarray) -> np.ndarray:
    kernels = len(observed) + 1
    weights = np.full((kernels, choices), 1.0 / kernels)
    weights[np.arange(len(observed)), observed] += 1.0
    weights /= weights.sum(axis=1, keepdims=True)
    return np.log(weights[:, candidates])


def _log_density(trials: Sequence[FrozenTrial], space: dict[str, Any], candidates: np.ndarray) -> np.ndarray:
    """log of the mixture's density at each candidate row (one column per parameter of ``space``)."""
    if not trials:
        weights = np.array([1.0])
    else:
        weights = np.append(_weights(len(trials)), 1.0)
        weights /= weights.sum()
    total = np.log(weights)[:, None] + np.zeros((1, len(candidates)))
    for j, (name, distribution) in enumerate(space.items()):
        observed = np.array([t.params[name] for t in trials], dtype=int)
        column = candidates[:, j]
        if isinstance(distribution, CategoricalDistribution):
            total += _category_log_mass(observed, len(distribution.choices), column)
        elif isinstance(distribution, IntDistribution):
            total += _ordered_log_mass(observed, distribution.low, distribution.high, column)
        else:
            raise TypeError(f"{name}: a {type(distribution).__name__} is not a space's index")
    peak = total.max(axis=0)
    return peak + np.log(np.exp(total - peak).sum(axis=0))


def tpe_score(trials: Sequence[FrozenTrial], space: dict[str, Any], candidates: np.ndarray) -> np.ndarray:
    """``log l(x) − log g(x)`` of each candidate row: higher is more promising."""
    good, bad = split_good_bad(trials)
    return _log_density(good, space, candidates) - _log_density(bad, space, candidates)
