"""Where a sweep's time goes: every config's phases, with start and end, as the engine saw them.

A config moves through :data:`PHASES` in order, skipping those that do not
apply: ``queued`` (taken from the feed, no worker free yet), ``compiling`` (in a
compile worker), ``compiled`` (done compiling, held back from the bench slot:
on the CPU benchmarks wait until no compile runs), ``waiting`` (ready, the bench
slot busy with another config), ``checking`` (loaded from the kernel cache, first
call, reference check), ``benchmarking`` (the timed calls), ``confirming`` (a
suspiciously fast first timing timed again) and ``rebenchmarking`` (the
interleaved re-benchmark of the top configs; those spans overlap across configs,
since the configs take turns). Times are seconds from the ``tune()`` call.

The :class:`Summary` turns the spans into one line: how busy the compile
workers and the bench slot were, what bounds the wall time (the *critical
path*: compiles, benchmarks or the workers' start), how the workers started
(from the session's warm pool, or cold: forked by the zygote, or spawned and
why the zygote did not serve, :class:`WorkerStart`) and when the first compile
began.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BENCH_PHASES", "PHASES", "Span", "Summary", "Timeline", "WorkerStart"]

PHASES = ("queued", "compiling", "compiled", "waiting", "checking", "benchmarking", "confirming", "rebenchmarking")
BENCH_PHASES = ("checking", "benchmarking", "confirming", "rebenchmarking")  # what occupies the bench slot


@dataclass(frozen=True)
class Span:
    """One phase of one config: ``[start_s, end_s)`` in seconds from the ``tune()`` call."""

    index: int
    phase: str
    start_s: float
    end_s: float
    lane: str = ""  # the compile worker ("worker 3") or "bench"

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True)
class WorkerStart:
    """How one compile worker started cold: forked by the zygote, or spawned as an interpreter of its own."""

    forked: bool
    why_spawned: str | None = None  # the one line the worker's log has on why the zygote did not serve it
    zygote_import_s: float | None = None  # the zygote's own import of TileLang, where it got that far


@dataclass(frozen=True)
class Summary:
    """A sweep's timeline in a few numbers (fractions are 0..1); :meth:`text` is the one-line form."""

    wall_s: float
    workers: int
    compile_busy: float  # of the workers' time over the wall time
    bench_busy: float  # of the wall time, the bench slot in use
    critical_path: str  # "compiles", "benchmarks" or "worker start"
    first_compile_s: float | None  # from the tune() call to the first compile's start
    cold_workers: int  # workers this sweep started
    cold_start_s: float | None  # the slowest of them, from start to TileLang imported
    warm_workers: int  # workers taken from the session's pool, already running
    forked_workers: int = 0  # of the cold ones, forked by the zygote
    spawned_workers: int = 0  # of the cold ones, spawned (the rest: not known, never ready)
    why_spawned: str | None = None  # the most frequent reason the zygote did not serve
    zygote_import_s: float | None = None  # the zygote's import of TileLang, where known

    def text(self) -> str:
        """``compile 83 % of 16 workers busy, bench 41 % busy, critical path: compiles; ...``."""
        line = (
            f"compile {self.compile_busy:.0%} of {self.workers} worker{'s' if self.workers != 1 else ''} busy, "
            f"bench {self.bench_busy:.0%} busy, critical path: {self.critical_path}"
        ).replace("%", " %")
        starts = []
        if self.warm_workers:
            starts.append(f"{self.warm_workers} from the warm pool")
        if self.cold_workers:
            starts.append(self._cold_text())
        if starts:
            line += f"; workers: {', '.join(starts)}"
        if self.first_compile_s is not None:
            line += f"; first compile after {self.first_compile_s:.2f} s"
        return line

    def _cold_text(self) -> str:
        """``16 forked by the zygote in 3.1 s (its import 2.6 s)``, ``16 spawned in 12.6 s (why)``, ..."""
        unknown = self.cold_workers - self.forked_workers - self.spawned_workers
        counts = [(self.forked_workers, "forked by the zygote"), (self.spawned_workers, "spawned"), (unknown, "started cold")]
        how = ", ".join(f"{count} {what}" for count, what in counts if count > 0)
        took = f" in {self.cold_start_s:.1f} s" if self.cold_start_s is not None else ""
        notes = [self.why_spawned] if self.why_spawned else []
        if self.zygote_import_s is not None:
            whose = "its" if self.forked_workers else "the zygote's"
            notes.append(f"{whose} import {self.zygote_import_s:.1f} s")
        return f"{how}{took}{' (' + '; '.join(notes) + ')' if notes else ''}"


@dataclass
class Timeline:
    """The spans of one sweep, recorded as configs change phase (``origin``: the ``tune()`` call, monotonic)."""

    origin: float = field(default_factory=time.monotonic)
    spans: list[Span] = field(default_factory=list)
    workers: int = 0
    cold_workers: int = 0
    cold_start_s: float | None = None
    warm_workers: int = 0
    worker_starts: list[WorkerStart] = field(default_factory=list)  # how each cold worker started, once ready
    _open: dict[int, tuple[str, float, str]] = field(default_factory=dict, repr=False)

    def now(self) -> float:
        return time.monotonic() - self.origin

    def enter(self, index: int, phase: str, at: float | None = None, lane: str = "") -> None:
        """Config ``index`` starts ``phase`` at ``at`` (monotonic; default now), ending the phase it was in."""
        if phase not in PHASES:
            raise ValueError(f"unknown phase {phase!r}")
        start = self.now() if at is None else at - self.origin
        ended = self.leave(index, at)
        self._open[index] = (phase, start if ended is None else max(start, ended), lane)

    def leave(self, index: int, at: float | None = None) -> float | None:
        """Config ``index`` ends its current phase (if any) at ``at`` (monotonic; default now); when it ended."""
        opened = self._open.pop(index, None)
        if opened is None:
            return None
        phase, start, lane = opened
        end = max(start, self.now() if at is None else at - self.origin)
        self.spans.append(Span(index, phase, start, end, lane))
        return end

    def phase_of(self, index: int) -> str | None:
        """The phase config ``index`` is in now (None: none, or finished)."""
        opened = self._open.get(index)
        return opened[0] if opened else None

    def close(self) -> None:
        """End every open phase now (the sweep is over)."""
        for index in list(self._open):
            self.leave(index)

    def all_spans(self) -> list[Span]:
        """Every span so far, open phases included up to now, by start."""
        now = self.now()
        live = [Span(index, phase, start, max(start, now), lane) for index, (phase, start, lane) in self._open.items()]
        return sorted([*self.spans, *live], key=lambda span: (span.start_s, PHASES.index(span.phase)))

    def frame(self):
        """The spans as a DataFrame: ``index``, ``phase`` (categorical, in phase order), ``start_s``, ``end_s``,
        ``duration_s``, ``lane``."""
        import pandas as pd

        spans = self.all_spans()
        frame = pd.DataFrame.from_records(
            [(s.index, s.phase, s.start_s, s.end_s, s.duration_s, s.lane) for s in spans],
            columns=["index", "phase", "start_s", "end_s", "duration_s", "lane"],
        )
        frame["index"] = frame["index"].astype("int64")
        frame["phase"] = pd.Categorical(frame["phase"], categories=list(PHASES), ordered=True)
        for name in ("start_s", "end_s", "duration_s"):
            frame[name] = frame[name].astype("float64")
        return frame

    def summary(self) -> Summary | None:
        """The one-line figures, or None before any span."""
        spans = self.all_spans()
        if not spans:
            return None
        wall = max(span.end_s for span in spans)
        compiling = sum(span.duration_s for span in spans if span.phase == "compiling")
        bench = _union([(s.start_s, s.end_s) for s in spans if s.phase in BENCH_PHASES])
        first = min((span.start_s for span in spans if span.phase == "compiling"), default=None)
        workers = max(self.workers, 1)
        bounds = {"compiles": compiling / workers, "benchmarks": bench, "worker start": first or 0.0}
        critical = max(bounds, key=bounds.__getitem__)
        started = self.worker_start()
        return Summary(
            wall, self.workers, _fraction(compiling, workers * wall), _fraction(bench, wall), critical, first,
            self.cold_workers, self.cold_start_s, self.warm_workers, started["forked"], started["spawned"],
            started["why_spawned"], started["zygote_import_s"],
        )  # fmt: skip

    def worker_start(self) -> dict[str, Any]:
        """How the cold workers started: ``{"forked": n, "spawned": m, "why_spawned": the most frequent
        reason or None, "zygote_import_s": seconds or None}``."""
        reasons = Counter(s.why_spawned for s in self.worker_starts if not s.forked and s.why_spawned)
        imports = [s.zygote_import_s for s in self.worker_starts if s.zygote_import_s is not None]
        return {
            "forked": sum(s.forked for s in self.worker_starts),
            "spawned": sum(not s.forked for s in self.worker_starts),
            "why_spawned": reasons.most_common(1)[0][0] if reasons else None,
            "zygote_import_s": max(imports, default=None),
        }

    def started_workers(
        self, warm: int, cold: int, cold_start_s: float | None, start: WorkerStart | None = None
    ) -> None:
        """Count the workers of this sweep: ``warm`` from the pool, ``cold`` started (the slowest took
        ``cold_start_s``); ``start``: how one of the cold ones started, told once it is ready.

        ``workers`` (how many compile at once) is the engine's to say: a worker started to
        replace one that was killed adds to ``cold_workers``, not to it.
        """
        self.warm_workers += warm
        self.cold_workers += cold
        if cold_start_s is not None:
            self.cold_start_s = max(self.cold_start_s or 0.0, cold_start_s)
        if start is not None:
            self.worker_starts.append(start)


def _fraction(part: float, whole: float) -> float:
    return min(1.0, part / whole) if whole > 0 else 0.0


def _union(intervals: list[tuple[float, float]]) -> float:
    """The total length covered by ``intervals``."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def frame_of(result: Any):
    """``result.timeline()``: the spans of a :class:`~tilelab.tune.result.TuneResult`, its swept parameters first."""
    frame = (result.timeline_record or Timeline()).frame()
    configs = result.configs
    for position, name in enumerate(result.swept):
        frame.insert(position, name, [configs[i].get(name) if 0 <= i < len(configs) else None for i in frame["index"]])
    return frame
