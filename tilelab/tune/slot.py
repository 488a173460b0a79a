"""The bench slot: the parent times one config at a time, confirms surprises, and re-benchmarks the top interleaved.

A compiled config goes through :func:`tilelab.tune.bench.prepare` (the
``checking`` phase: built from the kernel cache, run once, compared with the
reference once) and :func:`tilelab.tune.bench.measure` (``benchmarking``).
When its timing beats the best so far by more than the noise (its noise
band's upper end below the best's lower end, :func:`tilelab.tune.noise.suspicious`)
it is timed once more (``confirming``) before it can become the best: the row
keeps the slower of the two timings and the first one in ``first_ms``. A
parallel warm-up, a clock boost or a lucky cache can make one timing fast; two
in a row are much less likely.

The prepared kernels of the fastest configs are kept (their inputs too), so the
final re-benchmark times them on the same inputs, round-robin
(:func:`tilelab.tune.noise.interleaved`), without building or checking again.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tilelab.tune.bench import BenchOutcome, Prepared, measure, prepare, release_buffers
from tilelab.tune.noise import Rebenched, interleaved, suspicious
from tilelab.tune.result import TuneRow, throughput

__all__ = ["ROUND_MS", "BenchSlot"]

ROUND_MS = {"cuda": 10.0, "cpu": 5.0}  # each config's share of one round of the interleaved re-benchmark


class BenchSlot:
    """Benchmarks of one sweep (``sweep``: a :class:`~tilelab.tune.runner.Sweep`) in this process."""

    def __init__(self, sweep: Any, timeline: Any) -> None:
        self.sweep, self.timeline = sweep, timeline
        self.kept: dict[int, tuple[float, Prepared]] = {}  # index -> (latency, prepared), the fastest few

    def bench(self, index: int, config: dict, best: TuneRow | None) -> tuple[BenchOutcome, float | None]:
        """Check and time ``config``; confirm it when it beats ``best`` by more than the noise.

        Returns the outcome and, for a confirmed config, its first timing (ms).
        """
        sweep = self.sweep
        self.timeline.enter(index, "checking", lane="bench")
        prepared = prepare(sweep.kernel, sweep.args, {**sweep.fixed, **config}, sweep.choice, sweep.reference,
                           sweep.rtol, sweep.atol, sweep.timer)  # fmt: skip
        if isinstance(prepared, BenchOutcome):
            return prepared, None
        self.timeline.enter(index, "benchmarking", lane="bench")
        prune_at = best.latency_ms if sweep.prune and best is not None else None
        outcome = measure(prepared, prune_at)
        first_ms = None
        if outcome.status == "ok" and best is not None and suspicious(outcome.spread.high_ms, best.noise_low_ms):
            self.timeline.enter(index, "confirming", lane="bench")
            again = measure(prepared)
            if again.status == "ok":
                first_ms = outcome.latency_ms
                slower = max(outcome, again, key=lambda o: o.spread.median_ms)
                outcome = replace(slower, bench_s=outcome.bench_s + again.bench_s)
        if outcome.status == "ok":
            self._keep(index, outcome.latency_ms, prepared)
        return outcome, first_ms

    def _keep(self, index: int, latency: float, prepared: Prepared) -> None:
        """Keep the prepared kernels of the fastest configs only (their inputs hold device memory)."""
        self.kept[index] = (latency, prepared)
        keep = max(self.sweep.rebench, 1)
        for dropped in sorted(self.kept, key=lambda i: self.kept[i][0])[keep:]:
            del self.kept[dropped]

    def fields(self, config: dict, outcome: BenchOutcome, first_ms: float | None = None) -> dict[str, Any]:
        """The row's timing fields from a benchmark's outcome."""
        sweep, spread = self.sweep, outcome.spread
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

    def rebench(self, rows: list[TuneRow]) -> Rebenched | None:
        """Time ``rows`` (the fastest configs) again, interleaved; None when fewer than two can be timed."""
        sweep = self.sweep
        prepared = {}
        for row in rows:
            kept = self.kept.get(row.index)
            ready = kept[1] if kept else prepare(sweep.kernel, sweep.args, {**sweep.fixed, **row.config}, sweep.choice, timer=sweep.timer)
            if isinstance(ready, Prepared):
                prepared[row.index] = ready
        if len(prepared) < 2:
            return None
        share = ROUND_MS["cuda" if sweep.choice.is_cuda else "cpu"]
        latency = {row.index: row.latency_ms for row in rows}
        calls = {index: max(1, int(share / max(latency[index], 1e-6))) for index in prepared}
        for index in prepared:
            self.timeline.enter(index, "rebenchmarking", lane="bench")
        try:
            return interleaved(list(prepared), lambda index, count: prepared[index].sample(count), calls)
        finally:
            for index in prepared:
                self.timeline.leave(index)

    def release(self) -> None:
        """Drop the kept kernels, their inputs and the flush buffer (the sweep is over)."""
        self.kept.clear()
        release_buffers()
