"""The executor seam: what a sweep needs from an engine that runs its compiles and benchmarks elsewhere.

The local runner (:mod:`tilelab.tune.runner`: compile processes, benchmarks in
the notebook's process) is the default and needs none of this. An
:class:`Engine` runs tasks on other machines: it is told to compile or to
benchmark one config, reports what finished (or was lost) as :data:`Event`
values, and can cancel everything. :func:`run_on_engine` drives it with the
local runner's own bookkeeping (its feed of configs, rows, history writes,
live-view refreshes, ``on_row`` calls and final re-benchmark), so rows are
the same whichever engine measured them.
:class:`tilelab.tune.dask_engine.DaskEngine` is the engine TileLab ships;
another (Ray, a batch queue) would implement the same methods.

Policy lives here, not in engines: a task whose worker was lost becomes a
``worker_lost`` row and is submitted once more (elsewhere: the lost worker is
gone); lost again, the row stays. On the CPU, benchmarks wait until no compile
is running, as they do locally, so that compiles do not disturb wall-clock
timings. The timeline records what the driver sees (a task from its submission
to its event), a wall-clock budget stops new compiles as locally, and the top
configs are re-benchmarked one after another on the engine (not interleaved:
each benchmark is a task of its own, so no verdict), with no confirmation of
fast first timings.
"""

from __future__ import annotations

import queue
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

from tilelab.tune.bench import BenchOutcome
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.tune.runner import Sweep, _Run
from tilelab.tune.search import GridFeed

__all__ = ["Benched", "Compiled", "Engine", "Event", "Lost", "drain", "run_on_engine"]

_POLL_S = 0.5


@dataclass(frozen=True)
class Compiled:
    """A compile task ended; ``status`` is a :class:`TuneStatus` value (``ok`` when it compiled)."""

    index: int
    config: dict
    status: str
    error: str | None
    seconds: float
    columns: dict = field(default_factory=dict)  # the row's machine-code columns
    notes: tuple[str, ...] = ()  # what the compile could not do, for the result's notes


@dataclass(frozen=True)
class Benched:
    """A benchmark task ended on ``device``."""

    index: int
    config: dict
    outcome: BenchOutcome
    device: str


@dataclass(frozen=True)
class Lost:
    """The worker holding a task (``stage``: ``compile`` or ``bench``) went away before the task ended."""

    index: int
    config: dict
    stage: str
    worker: str


Event = Compiled | Benched | Lost


class Engine(Protocol):
    """Runs one sweep's tasks; every method returns at once, results arrive through :meth:`events`."""

    name: str

    def resolve(self, arch: str | None, target: Any) -> tuple[Any, str]:
        """The ``TargetChoice`` and the device name of the workers that benchmark (before the sweep)."""

    def start(self, sweep: Sweep) -> None:
        """Get ready to run ``sweep``'s tasks (before the first is submitted)."""

    def slots(self) -> int:
        """How many compiles can run at once now (the driver keeps about twice as many submitted)."""

    def compile(self, index: int, config: dict) -> None:
        """Submit the compile of one config (again, after a loss: the earlier task is forgotten)."""

    def bench(self, index: int, config: dict, best_so_far: float | None = None) -> None:
        """Submit the benchmark of one compiled config (``best_so_far``: stop early when over twice it)."""

    def events(self, timeout: float) -> list[Event]:
        """What ended since the last call, waiting up to ``timeout`` seconds for the first event."""

    def cancel(self) -> None:
        """Drop every submitted task (an interrupt)."""

    def close(self) -> None:
        """Release what the sweep held on the workers."""


class _EngineRun(_Run):
    """The local runner's state and rows, with compiles and benchmarks on an engine instead of local processes."""

    def __init__(self, engine: Engine, sweep: Sweep, result: TuneResult, feed: Any, write: Any) -> None:
        super().__init__(sweep, result, feed, write)
        self.engine = engine
        self.compiling: dict[int, dict] = {}  # index -> config
        self.waiting: dict[int, tuple[int, dict, float, dict]] = {}  # compiled and stored, benchmark not yet back
        self.held: deque[int] = deque()  # CPU target: benchmarks wait until no compile runs
        self.losses: set[tuple[int, str]] = set()

    def loop(self) -> None:
        self.engine.start(self.sweep)
        self.timeline.workers = max(1, self.engine.slots())
        while self._more_to_compile() or self.compiling or self.waiting:
            room = 2 * max(1, self.engine.slots()) - len(self.compiling)
            for job in self.feed.take(room) if room > 0 and not self._out_of_time() else ():
                self.jobs[job.index] = job
                self.compiling[job.index] = job.config
                self.engine.compile(job.index, job.config)
                self.timeline.enter(job.index, "compiling", lane=self.engine.name)
            if not self.compiling and not self.feed.has_ready():
                while self.held:
                    self._submit_bench(self.held.popleft())
            for event in self.engine.events(_POLL_S):
                self._handle(event)

    def _submit_bench(self, index: int) -> None:
        self.timeline.enter(index, "benchmarking", lane="bench")
        best = self.result.best if self.sweep.prune else None
        self.engine.bench(index, self.waiting[index][1], best.latency_ms if best is not None else None)

    def _handle(self, event: Event) -> None:
        if isinstance(event, Lost):
            self._lost(event)
        elif isinstance(event, Compiled):
            self._compiled(event)
        elif event.index in self.waiting:
            self._benched(event)

    def _compiled(self, event: Compiled) -> None:
        if self.compiling.pop(event.index, None) is None:
            return  # a task given up for lost that finished after all
        self.result.compiled += 1
        for note in event.notes:
            self.result.note(note)
        index, config, seconds, columns = event.index, event.config, event.seconds, event.columns
        if event.status == TuneStatus.OK.value and self.sweep.choice.runnable:
            self.timeline.enter(index, "compiled")
            self.write(self._row(index, config, TuneStatus.COMPILED, compile_s=seconds, **columns))
            self.waiting[index] = (index, config, seconds, columns)
            if self.sweep.choice.is_cuda:
                self._submit_bench(index)
            else:
                self.held.append(index)
            self._progress()
            return
        self.timeline.leave(index)
        error = self._explained(config, event.error) if event.status == TuneStatus.COMPILE_ERROR.value else event.error
        self._finish(self._row(index, config, TuneStatus(event.status), error, compile_s=seconds, **columns))

    def _benched(self, event: Benched) -> None:
        index, config, compile_s, columns = self.waiting.pop(event.index)
        self.timeline.leave(index)
        self.result.benchmarked += 1
        outcome = event.outcome
        if event.device != self.result.device:
            error = f"benchmarked on {event.device}, not {self.result.device}: one sweep never compares two device models"
            outcome = BenchOutcome("run_error", None, error, outcome.bench_s)
        row = self._row(index, config, TuneStatus(outcome.status), outcome.error, compile_s=compile_s, **self.slot.fields(config, outcome), **columns)
        self._finish(row)

    def _lost(self, event: Lost) -> None:
        busy = self.compiling if event.stage == "compile" else self.waiting
        if event.index not in busy:
            return
        again = (event.index, event.stage) not in self.losses
        doing = "compiled" if event.stage == "compile" else "benchmarked"
        error = f"the worker {event.worker} was lost before this config was {doing}"
        compile_s = self.waiting[event.index][2] if event.stage == "bench" else None
        row = self._row(event.index, event.config, TuneStatus.WORKER_LOST, error + ("; retried on another worker" if again else " twice"), compile_s=compile_s)
        if not again:
            busy.pop(event.index)
            self.timeline.leave(event.index)
            self._finish(row)
            return
        self.losses.add((event.index, event.stage))
        self.write(row)  # shown and stored until the retry's row replaces it; the feed hears only the final row
        self.result.add(row)
        self._progress()
        for callback in self.sweep.on_row:
            callback(row)
        if event.stage == "compile":
            self.engine.compile(event.index, event.config)
        else:
            self._submit_bench(event.index)

    def rebench(self) -> None:
        """Benchmark the top configs again, one after another on the engine, into ``rebench_ms`` (no verdict)."""
        ranked = sorted((r for r in self.result.rows.values() if r.ok and r.latency_ms is not None), key=lambda r: r.latency_ms)
        top = ranked[: self.sweep.rebench]
        if len(top) < 2:
            return
        for row in top:
            self.timeline.enter(row.index, "rebenchmarking", lane="bench")
            outcome = self._bench_again(row)
            self.timeline.leave(row.index)
            if outcome is not None and outcome.status == "ok":
                self._rebenched(row, outcome.latency_ms)
        self._progress()

    def _bench_again(self, row: TuneRow) -> BenchOutcome | None:
        """One serial benchmark of ``row``'s config on the engine; None when its worker was lost."""
        self.engine.bench(row.index, row.config)
        return self._one_bench(row.index)

    def _one_bench(self, index: int) -> BenchOutcome | None:
        """The outcome of the one benchmark in flight (None when its worker was lost: no re-benchmark then)."""
        while True:
            for event in self.engine.events(_POLL_S):
                if event.index == index and isinstance(event, (Benched, Lost)):
                    return event.outcome if isinstance(event, Benched) and event.device == self.result.device else None

    def keep_compiled(self) -> None:
        self.benching = None
        self.bench_queue = deque(self.waiting.values())
        super().keep_compiled()


def run_on_engine(engine: Engine, sweep: Sweep, result: TuneResult, feed: Any, write: Any) -> TuneResult:
    """Compile and benchmark the configs of ``feed`` on ``engine`` into ``result``; ``write`` stores each row.

    As :func:`tilelab.tune.runner.run_sweep`: the top ``sweep.rebench`` configs are
    benchmarked again at the end, and a ``KeyboardInterrupt`` cancels the engine's
    tasks and sets ``result.partial``; finished rows stay, and configs compiled but
    not benchmarked are ``compiled`` rows. Closing the engine is its creator's business.
    """
    if isinstance(feed, list):
        feed = GridFeed(feed)
    run = _EngineRun(engine, sweep, result, feed, write)
    result.running = True
    try:
        if feed.size:
            run.loop()
            if sweep.choice.runnable and sweep.rebench > 0:
                run.rebench()
    except KeyboardInterrupt:
        result.partial = True
        engine.cancel()
        run.keep_compiled()
    finally:
        run.close()
        result.running = False
    return result


def drain(events: queue.SimpleQueue, timeout: float) -> list[Any]:
    """Everything in ``events``, waiting up to ``timeout`` for the first item (engines' helper)."""
    try:
        items = [events.get(timeout=timeout)]
    except queue.Empty:
        return []
    deadline = time.monotonic() + 0.05  # what arrives right after the first comes along
    while True:
        try:
            items.append(events.get(timeout=max(0.0, deadline - time.monotonic())))
        except queue.Empty:
            return items
