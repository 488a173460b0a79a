"""Seeded fake timers for ``tilelab.tune(..., timer=...)`` and :func:`tilelab.tune.noise.interleaved`:
timings with drift, noise and outliers that the tests can reproduce exactly."""

from __future__ import annotations

import math
import random
from collections import Counter

__all__ = ["DriftingTimer", "FlukeTimer", "SteadyTimer"]


class DriftingTimer:
    """``timer(config, calls)``: each call takes ``true[config["block"]]`` ms, scaled by a slow drift.

    The drift is a sine of the timer's own clock (±``amplitude``, a period of 150 to 600 ms of
    calls, a random phase), as a GPU's clocks follow its temperature; each call also gets
    log-normal noise (``noise``) and, with 3 % chance, a 1.5× outlier. All of it from ``seed``.
    """

    def __init__(self, true: dict, seed: int, amplitude: float = 0.05, noise: float = 0.03) -> None:
        self.true, self.rng = true, random.Random(seed)
        self.clock = 0.0
        self.period = self.rng.uniform(150.0, 600.0)
        self.phase = self.rng.uniform(0.0, 2 * math.pi)
        self.amplitude, self.noise = amplitude, noise

    def __call__(self, config: dict, calls: int) -> list[float]:
        times = []
        for _ in range(calls):
            drift = 1 + self.amplitude * math.sin(2 * math.pi * self.clock / self.period + self.phase)
            took = self.true[config["block"]] * drift * math.exp(self.rng.gauss(0.0, self.noise))
            if self.rng.random() < 0.03:
                took *= 1.5
            self.clock += took
            times.append(took)
        return times


class SteadyTimer:
    """``timer(config, calls)``: ``true[config["block"]]`` ms with a little seeded noise (``noise``)."""

    def __init__(self, true: dict, seed: int = 0, noise: float = 0.01) -> None:
        self.true, self.rng, self.noise = true, random.Random(seed), noise

    def __call__(self, config: dict, calls: int) -> list[float]:
        return [self.true[config["block"]] * math.exp(self.rng.gauss(0.0, self.noise)) for _ in range(calls)]


class FlukeTimer:
    """``timer(config, calls)``: ``true[config["block"]]`` ms exactly, except that the first ``fast_calls``
    calls of ``fluke`` take ``fast`` ms (a lucky first benchmark)."""

    def __init__(self, true: dict, fluke: int, fast: float, fast_calls: int = 60) -> None:
        self.true, self.fluke, self.fast, self.fast_calls = true, fluke, fast, fast_calls
        self.calls: Counter = Counter()

    def __call__(self, config: dict, calls: int) -> list[float]:
        block, times = config["block"], []
        for _ in range(calls):
            self.calls[block] += 1
            lucky = block == self.fluke and self.calls[block] <= self.fast_calls
            times.append(self.fast if lucky else self.true[block])
        return times
