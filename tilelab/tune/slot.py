"""The bench slot: one device times one config at a time, keeps the fastest prepared, and re-times the top interleaved.

A compiled config goes through :func:`tilelab.tune.bench.prepare` (the
``checking`` phase: built from the kernel cache, run once, compared with the
reference once) and :func:`tilelab.tune.bench.measure` (``benchmarking``).
The prepared kernels of the fastest configs are kept (their inputs too), so
a confirmation (:meth:`BenchSlot.again`) or the final re-benchmark
(:meth:`BenchSlot.retime`: round-robin, :func:`tilelab.tune.noise.interleaved`)
times them on the same inputs without building or checking again.

A slot serves both engines: :class:`~tilelab.tune.local_engine.LocalEngine`
keeps one in the notebook's process, and every Dask benchmark worker keeps one
per sweep (:mod:`tilelab.tune.dask_tasks`). What a timing means (is it
suspiciously fast, which of two timings stands, the row's fields) is the
sweep loop's, through the functions below.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tilelab.tune.bench import BenchOutcome, Prepared, Timer, measure, prepare, release_buffers
from tilelab.tune.noise import Rebenched, interleaved
from tilelab.tune.row import TuneRow, throughput

__all__ = ["ROUND_MS", "BenchInputs", "BenchSlot", "confirmed", "rebench_calls", "timing_fields"]

ROUND_MS = {"cuda": 10.0, "cpu": 5.0}  # each config's share of one round of the interleaved re-benchmark


@dataclass(frozen=True)
class BenchInputs:
    """What a slot needs to build, check and time a config of one sweep."""

    kernel: Any
    args: tuple
    fixed: dict
    choice: Any  # tilelab.targets.TargetChoice
    reference: Callable | None = None
    rtol: float = 1e-2
    atol: float = 1e-2
    timer: Timer | None = None
    keep: int = 3  # prepared configs kept (the fastest): the sweep's rebench count, at least one

    @classmethod
    def of(cls, sweep: Any) -> BenchInputs:
        """The inputs of a :class:`~tilelab.tune.sweep.Sweep`."""
        return cls(sweep.kernel, sweep.args, sweep.fixed, sweep.choice, sweep.reference, sweep.rtol, sweep.atol,
                   sweep.timer, max(sweep.rebench, 1))  # fmt: skip


class BenchSlot:
    """Benchmarks of one sweep on one device; ``note(index, phase)`` hears when a config starts a phase."""

    def __init__(self, inputs: BenchInputs, note: Callable[[int, str], None] | None = None) -> None:
        self.inputs = inputs
        self.note = note or (lambda index, phase: None)
        self.kept: dict[int, tuple[float, Prepared]] = {}  # index -> (latency, prepared), the fastest few

    def _prepare(self, config: dict, check: bool = True) -> Prepared | BenchOutcome:
        i = self.inputs
        reference = i.reference if check else None
        return prepare(i.kernel, i.args, {**i.fixed, **config}, i.choice, reference, i.rtol, i.atol, i.timer)

    def bench(self, index: int, config: dict, prune_at: float | None = None) -> BenchOutcome:
        """Check and time ``config``; stop after the probe calls when they are over twice ``prune_at`` (ms).

        The outcome's ``bench_s`` counts both (the check once, then the timed calls).
        """
        started = time.perf_counter()
        self.note(index, "checking")
        prepared = self._prepare(config)
        if isinstance(prepared, BenchOutcome):
            return prepared
        self.note(index, "benchmarking")
        outcome = measure(prepared, prune_at)
        if outcome.status == "ok":
            self._keep(index, outcome.latency_ms, prepared)
        return replace(outcome, bench_s=time.perf_counter() - started)

    def again(self, index: int, config: dict) -> BenchOutcome:
        """Time ``config`` once more: its kept kernel, or one prepared (and checked) anew."""
        kept = self.kept.get(index)
        prepared = kept[1] if kept else self._prepare(config)
        return prepared if isinstance(prepared, BenchOutcome) else measure(prepared)

    def _keep(self, index: int, latency: float, prepared: Prepared) -> None:
        """Keep the prepared kernels of the fastest configs only (their inputs hold device memory)."""
        self.kept[index] = (latency, prepared)
        for dropped in sorted(self.kept, key=lambda i: self.kept[i][0])[self.inputs.keep :]:
            del self.kept[dropped]

    def retime(self, configs: dict[int, dict], calls: dict[int, int]) -> Rebenched | None:
        """Time ``configs`` (the fastest) again, interleaved; None when fewer than two can be timed."""
        prepared = {}
        for index, config in configs.items():
            kept = self.kept.get(index)
            ready = kept[1] if kept else self._prepare(config, check=False)
            if isinstance(ready, Prepared):
                prepared[index] = ready
        if len(prepared) < 2:
            return None
        return interleaved(list(prepared), lambda index, count: prepared[index].sample(count), calls)

    def release(self) -> None:
        """Drop the kept kernels, their inputs and the flush buffer (the sweep is over)."""
        self.kept.clear()
        release_buffers()


def confirmed(first: BenchOutcome, again: BenchOutcome) -> tuple[BenchOutcome, float | None]:
    """A suspiciously fast ``first`` timing and its confirmation: the slower of the two stands (its
    ``bench_s`` both together), with the first timing; ``first`` alone when the second failed."""
    if again.status != "ok" or again.spread is None:
        return first, None
    slower = max(first, again, key=lambda o: o.spread.median_ms)
    return replace(slower, bench_s=first.bench_s + again.bench_s), first.latency_ms


def timing_fields(sweep: Any, config: dict, outcome: BenchOutcome, first_ms: float | None = None) -> dict[str, Any]:
    """The row's timing fields from a benchmark's outcome (``sweep``: its work per call for throughput)."""
    spread = outcome.spread
    flops = sweep.flops(config) if callable(sweep.flops) else sweep.flops
    moved = sweep.bytes(config) if callable(sweep.bytes) else sweep.bytes
    fields = {
        "latency_ms": outcome.latency_ms,
        "tflops": throughput(flops, outcome.latency_ms, 1e12) if outcome.status == "ok" else None,
        "gbps": throughput(moved, outcome.latency_ms, 1e9) if outcome.status == "ok" else None,
        "bench_s": outcome.bench_s,
        "timing": outcome.method,
        "first_ms": first_ms,
    }
    if spread is not None:
        fields.update(
            latency_min_ms=spread.min_ms, latency_median_ms=spread.median_ms, latency_p90_ms=spread.p90_ms,
            latency_std_ms=spread.std_ms, repetitions=spread.count, noise_low_ms=spread.low_ms,
            noise_high_ms=spread.high_ms,
        )  # fmt: skip
    return fields


def rebench_calls(rows: Sequence[TuneRow], is_cuda: bool) -> dict[int, int]:
    """Calls each config gets a round of the interleaved re-benchmark: about the same time for each."""
    share = ROUND_MS["cuda" if is_cuda else "cpu"]
    return {row.index: max(1, int(share / max(row.latency_ms, 1e-6))) for row in rows}
