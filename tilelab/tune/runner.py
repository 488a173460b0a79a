"""The sweep loop: one state machine for every engine, from the first config to the verdict.

:func:`run_sweep` drives an :class:`~tilelab.tune.engine.Engine`
(:class:`~tilelab.tune.local_engine.LocalEngine` by default: compile
processes from the session's pool, benchmarks in this process; or
:class:`~tilelab.tune.dask_engine.DaskEngine`) and owns everything a row
means, once for both:

- Which configs run, and when, is a feed's business (:mod:`tilelab.tune.search`):
  the grid hands out its list as fast as the engine takes it; a search asks its
  study for a batch and learns from every finished row.
- Every config that compiles is stored at once as a ``compiled`` row, which its
  benchmark later replaces: an interrupt (or a crash of the notebook's kernel)
  between compile and benchmark keeps it, and the next run measures it.
- On a GPU, benchmarks overlap the remaining compiles; on the CPU they wait
  until no compile runs, so that busy workers do not disturb wall-clock timings.
- Pruning: with ``prune``, a benchmark stops after its probe calls when they are
  over twice the best so far (a ``pruned`` row).
- A timing that beats the best so far by more than the noise (its noise band's
  upper end below the best's lower end, :func:`tilelab.tune.noise.suspicious`)
  is timed once more (``confirming``, where it was just timed) before it can
  become the best: the row keeps the slower of the two and the first in
  ``first_ms``. A parallel warm-up, a clock boost or a lucky cache can make one
  timing fast; two in a row are much less likely.
- When the last config is done, the top ``rebench`` configs are timed again,
  interleaved on one device with no compile running (parallel warm-up noise can
  pick the wrong config), and the best is chosen on that; the verdict says by how
  much, or that the top configs are tied (:mod:`tilelab.tune.noise`).
- A wall-clock budget (``deadline``) stops new configs from starting; configs
  submitted but not started are dropped, those already compiling finish.
- A task whose worker was lost (a cluster) becomes a ``worker_lost`` row and is
  submitted once more; lost again, the row stays.
- Every phase of every config is recorded in the result's timeline
  (:mod:`tilelab.tune.timeline`): the loop's own (``compiled``, ``confirming``,
  ``rebenchmarking``) and those only the engine sees (:class:`~tilelab.tune.engine.Phase`).
- A ``KeyboardInterrupt`` (Ctrl-C, a notebook interrupt) cancels the engine's
  tasks; finished rows stay, and configs compiled but not benchmarked are
  ``compiled`` rows.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tilelab.tune.bench import BenchOutcome
from tilelab.tune.engine import Benched, Compiled, Engine, Lost, Phase, Retimed, TuneSetupError, Workers
from tilelab.tune.local_engine import LocalEngine, worker_count
from tilelab.tune.noise import Rebenched, suspicious
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.tune.search import GridFeed, Job
from tilelab.tune.slot import confirmed, rebench_calls, timing_fields
from tilelab.tune.space import mistyped
from tilelab.tune.sweep import Sweep
from tilelab.tune.timeline import Timeline

__all__ = ["Sweep", "TuneSetupError", "run_sweep", "worker_count"]

_POLL_S = 0.5


class _Loop:
    """The state of one running sweep (one instance per :func:`run_sweep` call)."""

    def __init__(self, engine: Engine, sweep: Sweep, result: TuneResult, feed: Any, write: Callable) -> None:
        self.engine, self.sweep, self.result, self.feed, self.write = engine, sweep, result, feed, write
        self.jobs: dict[int, Job] = {}  # index -> its job, for the row's trial number
        self.compiling: dict[int, dict] = {}  # index -> config, submitted to compile
        self.compiled: dict[int, tuple[dict, float, dict]] = {}  # stored as compiled, benchmark not done: config, compile_s, columns
        self.held: deque[int] = deque()  # CPU target: benchmarks wait until no compile runs
        self.to_bench: deque[int] = deque()  # ready to benchmark, waiting for the engine's bench slots
        self.benching: set[int] = set()  # submitted to the engine's bench slots
        self.first: dict[int, BenchOutcome] = {}  # a suspiciously fast first timing, being confirmed
        self.losses: set[tuple[int, str]] = set()
        self.timeline = result.timeline_record = Timeline(sweep.started)
        self.budget_spent = self.done_compiling = False

    # -- the loop ----------------------------------------------------------------------------
    def run(self) -> None:
        self.engine.start(self.sweep, self.result.id, self.feed.width)
        self.result.gpu_state["start"] = self.engine.device_state()
        self.timeline.workers = max(1, self.engine.slots())
        while self._more_to_compile() or self.compiling or self.compiled:
            self._take()
            if not self.sweep.choice.is_cuda and not self.compiling and not self._more_to_compile(now=True):
                self.to_bench.extend(self.held)
                self.held.clear()
            self._submit_benches()
            if not self.compiling and not self._more_to_compile():
                self._compiles_done()
            for event in self.engine.events(_POLL_S):
                self._handle(event)
        self._compiles_done()

    def _take(self) -> None:
        room = self.engine.ahead * max(1, self.engine.slots()) - len(self.compiling)
        if room <= 0 or self._out_of_time():
            return
        for job in self.feed.take(room):
            self.jobs[job.index] = job
            self.compiling[job.index] = job.config
            self.engine.compile(job.index, job.config)

    def _out_of_time(self) -> bool:
        """Whether the wall-clock budget is spent; the first time, the configs not started are dropped."""
        deadline = self.sweep.deadline
        if deadline is None or time.monotonic() < deadline:
            return False
        if not self.budget_spent:
            self.budget_spent = True
            dropped = self.engine.withdraw()
            for index in dropped:
                self.compiling.pop(index, None)
                self.timeline.leave(index)
            # Only when configs were left: a budget nothing hit was not reached.
            self.result.budget_reached = bool(dropped) or not self.feed.exhausted()
        return True

    def _more_to_compile(self, now: bool = False) -> bool:
        """Configs still to come from the feed (``now``: ready to come at once), within the budget."""
        if self._out_of_time():
            return False
        return self.feed.has_ready() if now else not self.feed.exhausted()

    def _compiles_done(self) -> None:
        if not self.done_compiling:
            self.done_compiling = True
            self.engine.compiles_done()

    def _handle(self, event: Any) -> None:
        if isinstance(event, Phase):
            if event.index in self.compiling or event.index in self.compiled:  # not for a config dropped since
                self.timeline.enter(event.index, event.phase, at=event.at, lane=event.lane)
        elif isinstance(event, Workers):
            self.timeline.started_workers(event.warm, event.cold, event.cold_start_s, event.start)
        elif isinstance(event, Compiled):
            self._compiled(event)
        elif isinstance(event, Benched):
            self._benched(event)
        elif isinstance(event, Lost):
            self._lost(event)

    # -- compiles --------------------------------------------------------------------------------
    def _compiled(self, event: Compiled) -> None:
        if self.compiling.pop(event.index, None) is None:
            return  # a task given up for lost (or dropped by the budget) that finished after all
        self.result.compiled += 1
        for note in event.notes:
            self.result.note(note)
        index, config, seconds, columns = event.index, event.config, event.seconds, event.columns
        if event.status == TuneStatus.OK.value and self.sweep.choice.runnable:
            self.timeline.enter(index, "compiled", at=event.ended)
            self.write(self._row(index, config, TuneStatus.COMPILED, compile_s=seconds, **columns))
            self.compiled[index] = (config, seconds, columns)  # only once stored: see keep_compiled()
            (self.to_bench if self.sweep.choice.is_cuda else self.held).append(index)
            self._progress()
            return
        self.timeline.leave(index, at=event.ended)
        error = self._explained(config, event.error) if event.status == TuneStatus.COMPILE_ERROR.value else event.error
        self._finish(self._row(index, config, TuneStatus(event.status), error, compile_s=seconds, **columns))

    def _explained(self, config: dict, error: str | None) -> str | None:
        wrong = mistyped({**self.sweep.fixed, **config}, self.sweep.int_params)
        return f"{wrong} (the compiler said: {error})" if wrong else error

    # -- benchmarks ------------------------------------------------------------------------------
    def _submit_benches(self) -> None:
        """Start benchmarks while the engine has a bench slot free (so pruning sees the best so far), the rest wait."""
        while self.to_bench and len(self.benching) < max(1, self.engine.bench_slots()):
            index = self.to_bench.popleft()
            self.benching.add(index)
            self._submit_bench(index)
        for index in self.to_bench:
            if self.timeline.phase_of(index) == "compiled":
                self.timeline.enter(index, "waiting")

    def _submit_bench(self, index: int) -> None:
        best = self.result.best if self.sweep.prune else None
        self.engine.bench(index, self.compiled[index][0], best.latency_ms if best is not None else None)

    def _benched(self, event: Benched) -> None:
        if event.index not in self.compiled:
            return
        index, outcome = event.index, event.outcome
        config, compile_s, columns = self.compiled[index]
        first, first_ms = self.first.pop(index, None), None
        if event.device is not None and event.device != self.result.device:
            error = f"benchmarked on {event.device}, not {self.result.device}: one sweep never compares two device models"
            outcome = BenchOutcome("run_error", None, error, outcome.bench_s)
        elif first is not None:
            outcome, first_ms = confirmed(first, outcome)
        elif self._suspicious(outcome):
            self.first[index] = outcome
            self.timeline.enter(index, "confirming", lane="bench")
            self.engine.bench(index, config, again=True)
            return
        del self.compiled[index]
        self.benching.discard(index)
        self.timeline.leave(index)
        self.result.benchmarked += 1
        fields = timing_fields(self.sweep, config, outcome, first_ms)
        self._finish(self._row(index, config, TuneStatus(outcome.status), outcome.error, compile_s=compile_s, **fields, **columns))

    def _suspicious(self, outcome: BenchOutcome) -> bool:
        """Whether ``outcome`` beats the best so far by more than the noise (so it is timed once more)."""
        best = self.result.best
        if outcome.status != "ok" or outcome.spread is None or best is None:
            return False
        return suspicious(outcome.spread.high_ms, best.noise_low_ms)

    def _lost(self, event: Lost) -> None:
        busy = self.compiling if event.stage == "compile" else self.compiled
        if event.stage not in ("compile", "bench") or event.index not in busy:
            return
        again = (event.index, event.stage) not in self.losses
        doing = "compiled" if event.stage == "compile" else "benchmarked"
        error = f"the worker {event.worker} was lost before this config was {doing}"
        compile_s = self.compiled[event.index][1] if event.stage == "bench" else None
        row = self._row(event.index, event.config, TuneStatus.WORKER_LOST, error + ("; retried on another worker" if again else " twice"), compile_s=compile_s)
        if not again:
            busy.pop(event.index)
            self.benching.discard(event.index)
            self.first.pop(event.index, None)
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
        elif event.index in self.first:
            self.engine.bench(event.index, event.config, again=True)
        else:
            self._submit_bench(event.index)

    # -- rows ------------------------------------------------------------------------------------
    def _row(self, index: int, config: dict, status: TuneStatus, error: str | None = None, **fields: Any) -> TuneRow:
        """A row of this run: its trial number, who chose it and when it finished."""
        job = self.jobs.get(index)
        return TuneRow(
            index, config, status, error, device=self.result.device, trial=job.trial if job else None,
            chosen_by=job.chosen_by if job else None, elapsed_s=time.monotonic() - self.sweep.started, **fields,
        )  # fmt: skip

    def _finish(self, row: TuneRow) -> None:
        self.write(row)
        self.result.add(row)
        self.feed.told(row)
        self._progress()
        for callback in self.sweep.on_row:
            callback(row)

    def _progress(self) -> None:
        for callback in self.sweep.on_progress:
            callback()

    # -- the end ---------------------------------------------------------------------------------
    def rebench(self) -> None:
        """Time the top configs again, interleaved; their times become ``rebench_ms`` and the verdict is kept."""
        ranked = sorted((r for r in self.result.rows.values() if r.ok and r.latency_ms is not None), key=lambda r: r.latency_ms)
        top = ranked[: self.sweep.rebench]
        if len(top) < 2:
            return
        for row in top:
            self.timeline.enter(row.index, "rebenchmarking", lane="bench")
        self.engine.rebench({row.index: row.config for row in top}, rebench_calls(top, self.sweep.choice.is_cuda))
        found = self._retimed()
        for row in top:
            self.timeline.leave(row.index)
        if found is None:
            return
        for row in top:
            if row.index in found.times_ms:
                again = replace(row, rebench_ms=found.times_ms[row.index])
                self.result.add(again)
                if not row.cached:
                    self.write(again)
        self.result.verdict = found.verdict
        self._progress()

    def _retimed(self) -> Rebenched | None:
        """The interleaved re-benchmark's times (None when its worker was lost or measured another device)."""
        while True:
            for event in self.engine.events(_POLL_S):
                if isinstance(event, Retimed):
                    return event.found if event.device in (None, self.result.device) else None
                if isinstance(event, Lost) and event.stage == "rebench":
                    self.result.note(f"the worker {event.worker} was lost during the final re-benchmark: no verdict")
                    return None
                self._handle(event)

    def keep_compiled(self) -> None:
        """After an interrupt: the configs compiled (and stored) but not benchmarked become rows of the result."""
        for index, (config, compile_s, columns) in self.compiled.items():
            if index not in self.result.rows:
                self.result.add(self._row(index, config, TuneStatus.COMPILED, compile_s=compile_s, **columns))

    def close(self) -> None:
        self.timeline.close()
        if hasattr(self.feed, "close"):
            self.feed.close()


def run_sweep(sweep: Sweep, result: TuneResult, feed: Any, write: Callable[[TuneRow], None], engine: Engine | None = None) -> TuneResult:
    """Compile and benchmark the configs of ``feed`` on ``engine`` into ``result``; ``write`` stores each row.

    ``feed`` is a :class:`~tilelab.tune.search.GridFeed` or
    :class:`~tilelab.tune.search.StudyFeed` (a list of (index, config) is taken as a grid).
    ``engine`` None: a :class:`~tilelab.tune.local_engine.LocalEngine` of ``sweep.workers``
    workers, closed at the end; an engine given is its creator's to close.
    A ``KeyboardInterrupt`` (Ctrl-C, a notebook interrupt) ends the sweep early:
    the engine's tasks are cancelled and ``result.partial`` is set; finished rows
    stay, and configs compiled but not benchmarked are ``compiled`` rows.
    """
    if isinstance(feed, list):
        feed = GridFeed(feed)
    own = engine is None
    engine = LocalEngine(sweep.workers) if engine is None else engine
    loop = _Loop(engine, sweep, result, feed, write)
    result.running = True
    result.gpu_state = {"start": None}
    try:
        if feed.size:
            loop.run()
            if sweep.choice.runnable and sweep.rebench > 0:
                loop.rebench()
    except KeyboardInterrupt:
        result.partial = True
        engine.cancel()
        loop.keep_compiled()
    finally:
        loop.close()
        result.gpu_state["end"] = engine.device_state()
        result.running = False
        if own:
            engine.close()
    return result
