"""The local engine: compile configs in worker processes, benchmark them in the notebook's process.

Why processes. Threads overlap TileLang compiles well (lowering releases the
GIL, nvcc is a subprocess), but a config whose elaboration or lowering hangs
or crashes would take the notebook's kernel with it, and a thread cannot be
killed. Each worker is forked by the zygote (:mod:`tilelab.tune.zygote`, a
process that imported tilelang once and never touches CUDA; never a ``fork`` of
the notebook's process, which holds torch and the GPU), or where the zygote
cannot serve, a fresh interpreter (``python -m tilelab.tune.worker``) that
imports tilelang itself; it compiles one config at a time; a config past its
``timeout`` gets its worker killed (a replacement starts when there is work
for it), and becomes a ``timeout`` row. Workers are plain subprocesses
speaking pickles over pipes rather than a ``multiprocessing`` pool: a pool
cannot kill one hung task, and spawning would re-import a script's
``__main__``. They run in their own session, so a terminal's Ctrl-C reaches
only the parent, which then kills them.

Why benchmark in the parent. A worker's compile fills TileLang's kernel cache
(keyed on the elaborated TIR, target and pass configs); the parent compiles
the same config again through :func:`tilelab.tune.build.build` and hits the
cache: 3 ms for a CPU kernel (measured, against 0.6 s cold) and no nvcc run
for CUDA. The parent owns the GPU, benchmarks one config at a time (never two
on one GPU, :class:`~tilelab.tune.slot.BenchSlot`), runs the ``reference``
callable in-process (lambdas welcome) and keeps the compiled kernels, so
``best_kernel`` is at hand. A benchmark runs inside :meth:`LocalEngine.events`,
between reads of the workers' pipes; workers run at a lower priority, so the
parent still launches kernels on time. The cost: a benchmark itself cannot be
killed on timeout, and a kernel that faults the GPU faults the notebook, as it
would if run by hand.

Workers come from the session's pool (:mod:`tilelab.tune.pool`): a second
sweep in the same process finds them running, with TileLang imported, and only
sends its setup. When the sweep has no more to compile its idle workers go back
to the pool; workers still compiling at an interrupt are killed.
"""

from __future__ import annotations

import os
import time
from collections import deque
from multiprocessing.connection import wait
from typing import Any

from tilelab.targets import device_label, resolve_target
from tilelab.tune.engine import Benched, Compiled, Event, Phase, Retimed, TuneSetupError, Workers
from tilelab.tune.gpu_state import gpu_state
from tilelab.tune.pool import Worker, session_pool
from tilelab.tune.slot import BenchInputs, BenchSlot
from tilelab.tune.sweep import setup_message
from tilelab.tune.worker import read_message

__all__ = ["LocalEngine", "worker_count"]


def worker_count(workers: int | None) -> int:
    """Compile processes for ``workers`` (None: one per available CPU)."""
    return workers or len(os.sched_getaffinity(0))


class LocalEngine:
    """The :class:`~tilelab.tune.engine.Engine` of a sweep on this machine: ``workers`` compile processes
    (None: one per CPU) and the bench slot in this process.

    ``warm`` starts that many workers in the session's pool at once (a sweep's first
    thing: they import TileLang while the rest is set up).
    """

    name = "local"
    ahead = 1  # a config goes to a worker when one is free: a search learns as late as it can

    def __init__(self, workers: int | None = None, warm: int | None = None) -> None:
        self.count = worker_count(workers)
        if warm:
            session_pool().warm(min(self.count, warm))
        self.choice: Any = None
        self.size = self.count
        self.workers: list[Worker] = []
        self.busy: dict[Worker, tuple[int, dict, float]] = {}  # worker -> index, config, sent (monotonic)
        self.ready: set[Worker] = set()  # loaded this sweep's kernel
        self.lanes: dict[Worker, str] = {}
        self.cold: set[Worker] = set()  # started for this sweep (or just before it, by tune())
        self.pending: deque[tuple[int, dict]] = deque()  # submitted, no worker free yet
        self.benches: deque[tuple[str, Any]] = deque()  # ("bench", (index, config, prune_at, again)) or ("rebench", ...)
        self.out: list[Event] = []
        self.slot: BenchSlot | None = None
        self.done_compiling = False

    # -- before the sweep -----------------------------------------------------------------
    def resolve(self, arch: str | None, target: Any) -> tuple[Any, str]:
        choice = resolve_target(arch, target)
        return choice, device_label(choice)

    def start(self, sweep: Any, sweep_id: str, width: int) -> None:
        """Take warm workers from the session's pool, start the rest, and send every one this sweep's setup."""
        self.choice, self.sweep_id, self.timeout = sweep.choice, sweep_id, sweep.timeout
        self.setup = setup_message(sweep, sweep_id)
        self.slot = BenchSlot(BenchInputs.of(sweep), self._note)
        self.size = max(1, min(self.count, width))
        pooled, missing = session_pool().take(self.size)
        self.workers = [*pooled, *(Worker() for _ in range(missing))]
        for number, worker in enumerate(self.workers, 1):
            self.lanes[worker] = f"worker {number}"
            worker.load(self.setup)
        # Started by this tune() call (tune() warms the pool first thing): their start is this sweep's cost.
        self.cold = {w for w in self.workers if w.spawned >= sweep.started}
        self.out.append(Workers(len(self.workers) - len(self.cold), len(self.cold)))
        if sweep.choice.runnable:
            import tilelang  # noqa: F401  (while the workers start: the parent compiles from cache later)

    # -- the Engine interface -----------------------------------------------------------------
    def slots(self) -> int:
        return self.size

    def bench_slots(self) -> int:
        return 1  # this process, one config at a time

    def compile(self, index: int, config: dict) -> None:
        self.pending.append((index, config))
        self._note(index, "queued", "")
        self._dispatch()

    def bench(self, index: int, config: dict, best_so_far: float | None = None, again: bool = False) -> None:
        self.benches.append(("bench", (index, config, best_so_far, again)))

    def rebench(self, configs: dict[int, dict], calls: dict[int, int]) -> None:
        self.benches.append(("rebench", (configs, calls)))

    def events(self, timeout: float) -> list[Event]:
        self._dispatch()
        streams = {w.proc.stdout: w for w in self.workers}
        quick = bool(self.benches or self.out)
        for stream in wait(list(streams), timeout=0 if quick else min(timeout, self._wait_time())) if streams else ():
            self._receive(streams[stream])
        self._expire()
        self._dispatch()
        if self.benches:
            self._run_bench(*self.benches.popleft())
        found, self.out = self.out, []
        if not found and not streams and not quick:
            time.sleep(min(timeout, 0.05))  # nothing to wait on: do not spin
        return found

    def withdraw(self) -> list[int]:
        dropped = [index for index, _ in self.pending]
        self.pending.clear()
        return dropped

    def compiles_done(self) -> None:
        """Give the idle workers back to the pool, warm for the next sweep."""
        self.done_compiling = True
        idle = [w for w in self.workers if w not in self.busy]
        self.workers = [w for w in self.workers if w in self.busy]
        session_pool().give_back(idle)

    def device_state(self) -> dict | None:
        return gpu_state(self.choice) if self.choice is not None else None

    def cancel(self) -> None:
        """Kill the workers compiling now (a hung compile would not stop) and drop what waits."""
        for worker in list(self.busy):
            self._drop(worker)
        self.pending.clear()
        self.benches.clear()

    def close(self) -> None:
        """Give the idle workers back to the pool, stop the rest, and drop the kept kernels."""
        for worker in list(self.busy):
            self._drop(worker)
        session_pool().give_back(self.workers)
        self.workers = []
        if self.slot is not None:
            self.slot.release()

    # -- compiles ----------------------------------------------------------------------------
    def _note(self, index: int, phase: str, lane: str = "bench") -> None:
        self.out.append(Phase(index, phase, lane, time.monotonic()))

    def _dispatch(self) -> None:
        for worker in [w for w in self.workers if w in self.ready and w not in self.busy]:
            if not self.pending:
                break
            index, config = self.pending.popleft()
            worker.send(index, config)
            self.busy[worker] = (index, config, time.monotonic())
            self._note(index, "compiling", self.lanes[worker])
        if self.pending and len(self.workers) < self.size:  # a worker was lost and there is work: start another
            lanes = {self.lanes[w] for w in self.workers}
            fresh = Worker(self.setup)
            self.lanes[fresh] = next(f"worker {n}" for n in range(1, self.size + 1) if f"worker {n}" not in lanes)
            self.workers.append(fresh)
            self.cold.add(fresh)
            self.out.append(Workers(cold=1))

    def _wait_time(self) -> float:
        deadlines = [sent + self.timeout - time.monotonic() for _, _, sent in self.busy.values()]
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
                self.out.append(Workers(cold_start_s=worker.alive_s, start=worker.proc.started))
        elif message[0] in ("ready", "setup_failed") and message[-1] != self.sweep_id:
            return  # the answer to an earlier sweep's setup, never read before the worker was pooled
        elif message[0] == "ready":
            self.ready.add(worker)
        elif message[0] == "setup_failed":
            raise TuneSetupError(f"compile workers could not rebuild the kernel: {message[1]}")
        else:
            _, index, status, error, seconds, columns, notes = message
            _, config, sent = self.busy.pop(worker)
            worker.job = None  # the pool takes back only workers with no job
            ended = min(time.monotonic(), sent + seconds)  # the worker's own clock: the parent may have been benchmarking
            self.out.append(Compiled(index, config, status, error, seconds, columns, tuple(notes), ended))

    def _died(self, worker: Worker) -> None:
        code, tail = worker.proc.wait(), worker.log_tail()
        if worker not in self.busy:
            raise TuneSetupError(f"a compile worker exited ({code}) before it was ready:\n{tail}")
        index, config, sent = self._drop(worker)
        error = f"compile worker died (exit code {code}){': ' + tail.splitlines()[-1] if tail else ''}"
        self.out.append(Compiled(index, config, "crashed", error, time.monotonic() - sent))

    def _expire(self) -> None:
        now = time.monotonic()
        for worker, (_, _, sent) in list(self.busy.items()):
            if now - sent > self.timeout:
                index, config, _ = self._drop(worker)
                error = f"compile did not finish within {self.timeout:g} s; the worker was killed"
                self.out.append(Compiled(index, config, "timeout", error, now - sent))

    def _drop(self, worker: Worker) -> tuple[int, dict, float]:
        """Stop ``worker`` and forget it; the job it held."""
        worker.stop()
        self.workers.remove(worker)
        self.ready.discard(worker)
        return self.busy.pop(worker)

    # -- benchmarks ------------------------------------------------------------------------------
    def _run_bench(self, kind: str, task: Any) -> None:
        if kind == "rebench":
            self.out.append(Retimed(self.slot.retime(*task)))
            return
        index, config, prune_at, again = task
        outcome = self.slot.again(index, config) if again else self.slot.bench(index, config, prune_at)
        self.out.append(Benched(index, config, outcome))
