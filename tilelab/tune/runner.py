"""The sweep runner: compile configs in worker processes, benchmark them in the parent.

Why processes. Threads overlap TileLang compiles well (lowering releases the
GIL, nvcc is a subprocess), but a config whose elaboration or lowering hangs
or crashes would take the notebook's kernel with it, and a thread cannot be
killed. Each worker is a fresh interpreter (``python -m tilelab.tune.worker``,
the "spawn" model: never ``fork`` after torch and tilelang are imported) that
imports tilelang once and compiles one config at a time; a config past its
``timeout`` gets its worker killed and replaced, and becomes a ``timeout`` row.
Workers are plain subprocesses speaking pickles over pipes rather than a
``multiprocessing`` pool: a pool cannot kill one hung task, and spawning would
re-import a script's ``__main__``. They run in their own session, so a
terminal's Ctrl-C reaches only the parent, which then kills them.

Why benchmark in the parent. A worker's compile fills TileLang's kernel cache
(keyed on the elaborated TIR, target and pass configs); the parent compiles
the same config again through :func:`tilelab.tune.build.build` and hits the
cache: 3 ms for a CPU kernel (measured, against 0.6 s cold) and no nvcc run
for CUDA. The parent owns the GPU, benchmarks one config at a time (never two
on one GPU), runs the ``reference`` callable in-process (lambdas welcome) and
keeps the compiled kernels, so ``best_kernel`` is at hand. On a GPU, benchmarks
overlap the remaining compiles (workers run at a lower priority, so the parent
still launches kernels on time); on the CPU they wait until compiles finish so
that busy workers do not disturb wall-clock timings. The cost: a benchmark
itself cannot be killed on timeout, and a kernel that faults the GPU faults
the notebook, as it would if run by hand.

Workers come from the session's pool (:mod:`tilelab.tune.pool`): a second
sweep in the same process finds them running, with TileLang imported, and only
sends its setup. When a sweep has no more to compile its idle workers go back
to the pool; workers still compiling at an interrupt are killed.

Every config that compiles is stored at once as a ``compiled`` row, which its
benchmark later replaces: an interrupt (or a crash of the notebook's kernel)
between compile and benchmark keeps it, and the next run measures it.

Which configs run, and when, is a feed's business (:mod:`tilelab.tune.search`):
the grid hands out its list as fast as workers take it; a search asks its
study for a batch and learns from every finished row. When the last config is
done, the top ``rebench`` configs are benchmarked again, interleaved, with no
compile running (parallel warm-up noise can pick the wrong config), and the
best is chosen on that re-benchmark (:mod:`tilelab.tune.slot`). A wall-clock
budget (``deadline``) stops new configs from starting; those already compiling
finish. Every phase of every config is recorded in the result's timeline
(:mod:`tilelab.tune.timeline`).
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.connection import wait
from typing import Any

from tilelab.tune.gpu_state import gpu_state
from tilelab.tune.pool import Worker, session_pool
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.tune.search import GridFeed, Job
from tilelab.tune.slot import BenchSlot
from tilelab.tune.space import mistyped
from tilelab.tune.sweep import Sweep, setup_message
from tilelab.tune.timeline import Timeline
from tilelab.tune.worker import read_message

__all__ = ["Sweep", "TuneSetupError", "run_sweep", "worker_count"]


class TuneSetupError(RuntimeError):
    """The compile workers could not start or could not rebuild the kernel."""


class _Run:
    """The state of one running sweep (one instance per :func:`run_sweep` call)."""

    def __init__(self, sweep: Sweep, result: TuneResult, feed: Any, write: Callable) -> None:
        self.sweep, self.result, self.write, self.feed = sweep, result, write, feed
        self.pending: deque[Job] = deque()  # taken from the feed, not yet sent to a worker
        self.jobs: dict[int, Job] = {}  # index -> its job, for the row's trial number
        self.bench_queue: deque[tuple[int, dict, float, dict]] = deque()  # compiled and stored, to benchmark
        self.benching: tuple[int, dict, float, dict] | None = None
        self.workers: list[Worker] = []
        self.started = sweep.started
        self.timeline = result.timeline_record = Timeline(sweep.started)
        self.slot = BenchSlot(sweep, self.timeline)
        self.size = max(1, min(worker_count(sweep.workers), feed.width))
        self.setup = setup_message(sweep, result.id)

    def loop(self) -> None:
        self._start_workers()
        if self.sweep.choice.runnable:
            import tilelang  # noqa: F401  (while the workers start: the parent compiles from cache later)
        while self._more_to_compile() or self.bench_queue or any(w.job for w in self.workers):
            self._dispatch()
            compiling = self._more_to_compile(now=True) or any(w.job for w in self.workers)
            may_bench = bool(self.bench_queue) and (self.sweep.choice.is_cuda or not compiling)
            streams = {w.proc.stdout: w for w in self.workers}
            for stream in wait(list(streams), timeout=0 if may_bench else self._wait_time()):
                self._receive(streams[stream])
            self._expire()
            if may_bench:
                for index, *_ in list(self.bench_queue)[1:]:  # the first starts now; the rest wait for the slot
                    if self.timeline.phase_of(index) == "compiled":
                        self.timeline.enter(index, "waiting")
                self._bench(*self.bench_queue.popleft())

    def _start_workers(self) -> None:
        """Take warm workers from the session's pool, start the rest, and send every one this sweep's setup."""
        pooled, missing = session_pool().take(self.size)
        self.workers = [*pooled, *(Worker() for _ in range(missing))]
        for number, worker in enumerate(self.workers, 1):
            worker.lane = f"worker {number}"
            worker.load(self.setup)
        # Started by this tune() call (tune() warms the pool first thing): their start is this sweep's cost.
        self.cold = {w for w in self.workers if w.spawned >= self.sweep.started}
        self.timeline.workers = self.size
        self.timeline.warm_workers, self.timeline.cold_workers = len(self.workers) - len(self.cold), len(self.cold)

    def _out_of_time(self) -> bool:
        """Whether the wall-clock budget is spent; the first time, the configs not started are dropped."""
        deadline = self.sweep.deadline
        if deadline is None or time.monotonic() < deadline:
            return False
        if not self.result.budget_reached and (self.pending or not self.feed.exhausted()):
            self.result.budget_reached = True  # only when configs were left: a budget nothing hit was not reached
            for job in self.pending:
                self.timeline.leave(job.index)
            self.pending.clear()
        return True

    def _more_to_compile(self, now: bool = False) -> bool:
        """Configs waiting for a worker, or still to come from the feed (``now``: ready to come at once)."""
        if self._out_of_time():
            return False
        return bool(self.pending) or (self.feed.has_ready() if now else not self.feed.exhausted())

    def _dispatch(self) -> None:
        idle = [w for w in self.workers if w.ready and w.job is None]
        if idle and len(self.pending) < len(idle) and not self._out_of_time():
            for job in self.feed.take(len(idle) - len(self.pending)):
                self.jobs[job.index] = job
                self.pending.append(job)
                self.timeline.enter(job.index, "queued")
        for worker in idle:
            if self.pending:
                job = self.pending.popleft()
                worker.send(job.index, job.config)
                self.timeline.enter(job.index, "compiling", lane=worker.lane)
            elif not self._more_to_compile():
                self.workers.remove(worker)
                session_pool().give_back([worker])  # no more work: back to the pool, warm for the next sweep

    def _wait_time(self) -> float:
        deadlines = [w.job[2] + self.sweep.timeout - time.monotonic() for w in self.workers if w.job]
        return max(0.0, min(deadlines, default=1.0))

    def _receive(self, worker: Worker) -> None:
        try:
            message = read_message(worker.proc.stdout)
        except EOFError:
            self._died(worker)
            return
        if message[0] == "alive":
            worker.alive(message[3])
            if worker in self.cold:
                self.timeline.cold_start_s = max(self.timeline.cold_start_s or 0.0, worker.alive_s)
        elif message[0] in ("ready", "setup_failed") and message[-1] != self.result.id:
            return  # the answer to an earlier sweep's setup, never read before the worker was pooled
        elif message[0] == "ready":
            worker.ready = True
        elif message[0] == "setup_failed":
            raise TuneSetupError(f"compile workers could not rebuild the kernel: {message[1]}")
        else:
            self._compiled(worker, *message[1:])

    def _compiled(self, worker: Worker, index: int, status: str, error: Any, seconds: float, columns: dict, notes: list) -> None:
        _, config, sent = worker.job
        worker.job = None
        self.result.compiled += 1
        for note in notes:
            self.result.note(note)
        ended = min(time.monotonic(), sent + seconds)  # the worker's own clock: the parent may have been benchmarking
        if status == "ok" and self.sweep.choice.runnable:
            self.timeline.enter(index, "compiled", at=ended)
            self.write(self._row(index, config, TuneStatus.COMPILED, compile_s=seconds, **columns))
            self.bench_queue.append((index, config, seconds, columns))  # only once stored: see keep_compiled()
            self._progress()
            return
        self.timeline.leave(index, at=ended)
        if status == TuneStatus.COMPILE_ERROR.value:
            error = self._explained(config, error)
        self._finish(self._row(index, config, TuneStatus(status), error, compile_s=seconds, **columns))

    def _explained(self, config: dict, error: str | None) -> str | None:
        wrong = mistyped({**self.sweep.fixed, **config}, self.sweep.int_params)
        return f"{wrong} (the compiler said: {error})" if wrong else error

    def _died(self, worker: Worker) -> None:
        code, tail = worker.proc.wait(), worker.log_tail()
        if worker.job is None:
            raise TuneSetupError(f"a compile worker exited ({code}) before it was ready:\n{tail}")
        index, config, started = worker.job
        error = f"compile worker died (exit code {code}){': ' + tail.splitlines()[-1] if tail else ''}"
        self._replace(worker)
        self.timeline.leave(index)
        self._finish(self._row(index, config, TuneStatus.CRASHED, error, compile_s=time.monotonic() - started))

    def _expire(self) -> None:
        now = time.monotonic()
        for worker in list(self.workers):
            if worker.job and now - worker.job[2] > self.sweep.timeout:
                index, config, started = worker.job
                self._replace(worker)
                self.timeline.leave(index)
                error = f"compile did not finish within {self.sweep.timeout:g} s; the worker was killed"
                self._finish(self._row(index, config, TuneStatus.TIMEOUT, error, compile_s=now - started))

    def _replace(self, worker: Worker) -> None:
        worker.stop()
        self.workers.remove(worker)
        if self._more_to_compile():
            fresh = Worker(self.setup)
            fresh.lane = worker.lane
            self.cold.add(fresh)
            self.timeline.cold_workers += 1
            self.workers.append(fresh)

    def _row(self, index: int, config: dict, status: TuneStatus, error: str | None = None, **fields: Any) -> TuneRow:
        """A row of this run: its trial number, who chose it and when it finished."""
        job = self.jobs.get(index)
        return TuneRow(
            index, config, status, error, device=self.result.device, trial=job.trial if job else None,
            chosen_by=job.chosen_by if job else None, elapsed_s=time.monotonic() - self.started, **fields,
        )  # fmt: skip

    def _bench(self, index: int, config: dict, compile_s: float, columns: dict) -> None:
        self.benching = (index, config, compile_s, columns)
        outcome, first_ms = self.slot.bench(index, config, self.result.best)
        self.timeline.leave(index)
        self.result.benchmarked += 1
        fields = self.slot.fields(config, outcome, first_ms)
        self._finish(self._row(index, config, TuneStatus(outcome.status), outcome.error, compile_s=compile_s, **fields, **columns))

    def _finish(self, row: TuneRow) -> None:
        self.write(row)
        self.result.add(row)
        self.feed.told(row)
        self._progress()
        for callback in self.sweep.on_row:
            callback(row)

    def rebench(self) -> None:
        """Benchmark the top configs again, interleaved; their times become ``rebench_ms`` and the verdict is kept."""
        ranked = sorted((r for r in self.result.rows.values() if r.ok and r.latency_ms is not None), key=lambda r: r.latency_ms)
        top = ranked[: self.sweep.rebench]
        if len(top) < 2:
            return
        found = self.slot.rebench(top)
        if found is None:
            return
        for row in top:
            if row.index in found.times_ms:
                self._rebenched(row, found.times_ms[row.index])
        self.result.verdict = found.verdict
        self._progress()

    def _rebenched(self, row: TuneRow, rebench_ms: float) -> None:
        again = replace(row, rebench_ms=rebench_ms)
        self.result.add(again)
        if not row.cached:
            self.write(again)

    def _progress(self) -> None:
        for callback in self.sweep.on_progress:
            callback()

    def keep_compiled(self) -> None:
        """After an interrupt: the configs compiled (and stored) but not benchmarked become rows of the result."""
        for index, config, compile_s, columns in [*filter(None, [self.benching]), *self.bench_queue]:
            if index not in self.result.rows:
                self.result.add(self._row(index, config, TuneStatus.COMPILED, compile_s=compile_s, **columns))

    def close(self, interrupted: bool = False) -> None:
        """Give the idle workers back to the pool (stop them all after an interrupt) and end the timeline."""
        if interrupted:
            for worker in self.workers:
                worker.stop()
        else:
            session_pool().give_back(self.workers)
        self.workers = []
        self.timeline.close()
        if hasattr(self.feed, "close"):
            self.feed.close()


def worker_count(workers: int | None) -> int:
    """Compile processes for ``workers`` (None: one per available CPU)."""
    return workers or len(os.sched_getaffinity(0))


def run_sweep(sweep: Sweep, result: TuneResult, feed: Any, write: Callable[[TuneRow], None]) -> TuneResult:
    """Compile and benchmark the configs of ``feed`` into ``result``; ``write`` stores each row.

    ``feed`` is a :class:`~tilelab.tune.search.GridFeed` or
    :class:`~tilelab.tune.search.StudyFeed` (a list of (index, config) is taken as a grid).
    A ``KeyboardInterrupt`` (Ctrl-C, a notebook interrupt) ends the sweep early:
    the workers are killed and ``result.partial`` is set; finished rows stay, and
    configs compiled but not benchmarked are ``compiled`` rows.
    """
    if isinstance(feed, list):
        feed = GridFeed(feed)
    run = _Run(sweep, result, feed, write)
    result.running = True
    interrupted = False
    result.gpu_state = {"start": gpu_state(sweep.choice)}
    try:
        if feed.size:
            run.loop()
            run.close()  # the compile workers are idle (or gone) before the re-benchmark
            if sweep.choice.runnable and sweep.rebench > 0:
                run.rebench()
    except KeyboardInterrupt:
        interrupted = result.partial = True
        run.keep_compiled()
    finally:
        run.close(interrupted)
        run.slot.release()
        result.gpu_state["end"] = gpu_state(sweep.choice)
        result.running = False
    return result
