"""Run a sweep on a Dask cluster: compiles on CPU workers, benchmarks on workers that declare a GPU.

``tilelab.tune(..., cluster=...)`` takes a ``distributed.Client``, a scheduler
address (``"tcp://host:8786"``) or a Dask cluster object. Workers need
TileLab installed (and the kernel's imports); the kernel itself travels as it
does to local compile workers (cloudpickle plus its cell's source).

Which worker does what follows Dask's resources. Benchmarks ask for one unit
of ``GPU`` (``CPU_BENCH`` for CPU-target kernels), so a worker started with
``--resources GPU=1`` (and ``CUDA_VISIBLE_DEVICES`` naming its GPU) runs one
benchmark at a time. Compiles go to the workers without that resource when
there are any (when none is alive, any worker compiles). Before
anything compiles every benchmark worker is asked for its target and device:
workers with two different GPU models are refused, because one sweep never
compares rows measured on different devices.

A confirmation of a suspiciously fast timing goes back to the worker that
made it (a loose restriction: elsewhere when that worker is gone), where the
config's kernel is still prepared; the interleaved re-benchmark of the top
configs is one task on one benchmark worker (:mod:`tilelab.tune.dask_tasks`).
A ``timer`` travels with the benchmark setup, so each benchmark worker keeps
its own copy for the sweep.

A worker that disappears while it holds a task is noticed from the
scheduler's events and reported as :class:`~tilelab.tune.engine.Lost`; the
sweep loop (:mod:`tilelab.tune.runner`) decides what happens next.
"""

from __future__ import annotations

import asyncio
import itertools
import pickle
import queue
import sys
import time
import uuid
import weakref
from typing import Any

import cloudpickle

from tilelab._tilelang import HOST_TARGETS
from tilelab.tune.bench import BenchOutcome
from tilelab.tune.dask_connect import ClusterError, connect, one_device, workers_of
from tilelab.tune.dask_tasks import (
    BenchReply,
    RetimeReply,
    SweepJob,
    bench_task,
    compile_task,
    probe_task,
    rebench_task,
    release,
)
from tilelab.tune.engine import Benched, Compiled, Event, Lost, Phase, Retimed, TuneSetupError, drain
from tilelab.tune.sweep import shipped

__all__ = ["BENCH_RESOURCES", "ClusterError", "DaskEngine"]

BENCH_RESOURCES = {"cuda": "GPU", "cpu": "CPU_BENCH"}
_PROBE_S = 300.0  # a first probe imports torch and TileLang on the worker
_POLL_S = 0.5
_INFO_S = 1.0
_GATHER_S = 60.0  # fetching a finished task's small reply; longer: treated as lost
_TIMEOUTS = (TimeoutError, asyncio.TimeoutError)  # what Future.result(timeout=...) raises (one class from Python 3.11)


def _cpu_target(target: Any) -> bool:
    if isinstance(target, str):
        return target.strip().lower() in HOST_TARGETS
    return isinstance(target, dict) and target.get("kind") in HOST_TARGETS


class DaskEngine:
    """The :class:`~tilelab.tune.engine.Engine` of one sweep on a Dask cluster."""

    name = "dask"
    ahead = 2  # compiles queued on the scheduler, so a worker that finishes one starts the next at once

    def __init__(self, cluster: Any) -> None:
        self.client, owned = connect(cluster)
        # A client this engine opened closes with it, even when tune() fails before close() is called.
        self._closing = weakref.finalize(self, self.client.close) if owned else None
        self._closed = False
        self.resource = BENCH_RESOURCES["cuda"]
        self.device = ""
        self.job: SweepJob | None = None
        self._events: queue.SimpleQueue = queue.SimpleQueue()
        self._current: dict[tuple[str, int], Any] = {}  # the live future of each (stage, index)
        self._tasks: dict[str, tuple[str, int, dict]] = {}  # key -> stage, index, config
        self._losses_seen = 0.0  # the scheduler's time of the last worker removal already read
        self._lost_on: dict[str, str] = {}  # task key -> the removed worker that ran it or held its result, until read
        self._restricted: dict[str, list[str]] = {}  # compile key -> the workers it may run on
        self._attempts = itertools.count()
        self._polled = 0.0
        self._info: tuple[float, dict] = (0.0, {})
        self._noted: list[Event] = []  # phases of tasks submitted since the last events()
        self._benched_on: dict[int, str] = {}  # index -> the worker that timed it last

    # -- before the sweep -----------------------------------------------------------------
    def resolve(self, arch: str | None, target: Any) -> tuple[Any, str]:
        """The target (a ``TargetChoice``) and device name of this cluster's benchmark workers.

        Raises
        ------
        ClusterError
            No worker at all, no benchmark worker for a CPU target, or benchmark workers
            with different devices.
        """
        self.resource = BENCH_RESOURCES["cpu" if _cpu_target(target) else "cuda"]
        workers = self._workers(fresh=True)
        if not workers:
            raise ClusterError(f"the Dask cluster at {self.client.scheduler.address} has no workers")
        benchers = [a for a, w in workers.items() if w.get("resources", {}).get(self.resource, 0) >= 1]
        if not benchers and self.resource == BENCH_RESOURCES["cpu"]:
            raise ClusterError(
                f"no worker of the Dask cluster declares the {self.resource} resource, so CPU kernels cannot be"
                f" benchmarked: start one with `dask worker ... --resources {self.resource}=1`"
            )
        probed = benchers or [next(iter(workers))]  # no GPU worker: lower CUDA kernels only
        answers = self._ask(probed, probe_task, arch, target, bool(benchers))
        self.device = one_device(
            self.resource, {address: device for address, (_, device) in zip(probed, answers, strict=True)}
        )
        return answers[0][0], self.device

    def _ask(self, addresses: list[str], function: Any, *args: Any) -> list[Any]:
        """``function(*args)`` run as a task on each of ``addresses``; a failure or no answer is a ClusterError."""
        futures = [
            self.client.submit(function, *args, workers=[a], pure=False, key=f"tilelab-probe-{uuid.uuid4().hex}")
            for a in addresses
        ]
        deadline = time.monotonic() + _PROBE_S
        answers = []
        try:
            for future in futures:
                answers.append(future.result(timeout=max(0.0, deadline - time.monotonic())))
        except _TIMEOUTS:
            raise ClusterError(f"a Dask worker did not answer within {_PROBE_S:g} s; are its threads busy?") from None
        except Exception as exc:  # whatever the worker raised, as one line (TileLab or the kernel's imports missing)
            raise ClusterError(f"a Dask worker could not prepare for tuning ({type(exc).__name__}: {exc})") from None
        finally:
            self.client.cancel(futures)
        return answers

    def start(self, sweep: Any, sweep_id: str, width: int) -> None:
        """Pack what every task of ``sweep`` needs (once; tasks carry it by reference to this job)."""
        args = tuple(shipped(a) for a in sweep.args)
        fixed = {k: shipped(v) for k, v in sweep.fixed.items()}
        paths = tuple(p for p in sys.path if p)
        compile_setup = {
            "spec": sweep.spec, "args": args, "fixed": fixed, "choice": sweep.choice, "sys_path": list(paths),
            "resources": sweep.resources,
        }  # fmt: skip
        payload = pickle.dumps(compile_setup, protocol=pickle.HIGHEST_PROTOCOL)
        bench_setup = {**compile_setup, "reference": sweep.reference, "rtol": sweep.rtol, "atol": sweep.atol,
                       "timer": sweep.timer, "keep": max(sweep.rebench, 1)}  # fmt: skip
        try:
            bench = cloudpickle.dumps(bench_setup)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise ClusterError(f"the reference check or timer cannot be sent to the Dask workers ({exc})") from None
        setup = len(payload).to_bytes(4, "big") + payload
        self.job = SweepJob(uuid.uuid4().hex[:16], setup, bench, paths, float(sweep.timeout))

    # -- the Engine interface ----------------------------------------------------------------
    def slots(self) -> int:
        workers = self._workers()
        compilers = self._compilers(workers) or list(workers)
        return sum(workers[a].get("nthreads", 1) for a in compilers) or 1

    def bench_slots(self) -> int:
        workers = self._workers()
        return sum(int(w.get("resources", {}).get(self.resource, 0)) for w in workers.values()) or 1

    def compile(self, index: int, config: dict) -> None:
        # Strictly (loose restrictions let idle benchmark workers steal compiles); with no compile
        # worker alive now, anywhere. A compile worker lost later loses its tasks, which are resubmitted.
        compilers = self._compilers(self._workers())
        key = self._submit("compile", index, config, compile_task, workers=compilers or None)
        if compilers:
            self._restricted[key] = compilers
        self._noted.append(Phase(index, "compiling", self.name, time.monotonic()))

    def bench(self, index: int, config: dict, best_so_far: float | None = None, again: bool = False) -> None:
        if again:  # where it was just timed, its kernel prepared; anywhere when that worker is gone
            where = self._benched_on.get(index)
            place = {"workers": [where], "allow_other_workers": True} if where else {}
            self._submit("bench", index, config, bench_task, None, True, resources={self.resource: 1}, priority=2, **place)
            return
        self._submit("bench", index, config, bench_task, best_so_far, resources={self.resource: 1}, priority=1)
        self._noted.append(Phase(index, "benchmarking", "bench", time.monotonic()))

    def rebench(self, configs: dict[int, dict], calls: dict[int, int]) -> None:
        self._submit("rebench", -1, {}, rebench_task, configs, calls, resources={self.resource: 1}, priority=2, pass_config=False)

    def events(self, timeout: float) -> list[Event]:
        found, self._noted = self._noted, []
        found += [event for future in drain(self._events, 0 if found else timeout) for event in self._read(future)]
        if time.monotonic() - self._polled >= _POLL_S:
            found += self._poll_losses()
        return found

    def withdraw(self) -> list[int]:
        """Cancel the compiles the scheduler has not given to a worker yet."""
        holding = {key for keys in self.client.processing().values() for key in keys}
        dropped = [key for key, (stage, _, _) in self._tasks.items() if stage == "compile" and key not in holding]
        indices = []
        for key in dropped:
            _, index, _ = self._tasks.pop(key)
            self._restricted.pop(key, None)
            self._current.pop(("compile", index)).cancel()
            indices.append(index)
        return indices

    def compiles_done(self) -> None:
        """Nothing to do: the workers' compile processes stop when the sweep's job is released (close)."""

    def device_state(self) -> dict | None:
        return None  # the GPUs are the workers'; their clocks are not read from here

    def cancel(self) -> None:
        futures = list(self._current.values())
        self._current.clear()
        self._tasks.clear()
        self._restricted.clear()
        if futures:
            self.client.cancel(futures, force=True)
        self._release()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.cancel()
        if self._closing is not None:
            self._closing()

    # -- helpers ---------------------------------------------------------------------------
    def _submit(self, stage: str, index: int, config: dict, task: Any, *more: Any, pass_config: bool = True, **where: Any) -> str:
        earlier = self._current.pop((stage, index), None)
        if earlier is not None:
            self._tasks.pop(earlier.key, None)
            self._restricted.pop(earlier.key, None)
            earlier.cancel()
        key = f"tilelab-{stage}-{self.job.digest}-{index}-{next(self._attempts)}"
        given = (index, config) if pass_config else ()
        future = self.client.submit(task, self.job, *given, *more, key=key, pure=False, **where)
        self._current[(stage, index)] = future
        self._tasks[key] = (stage, index, config)
        future.add_done_callback(self._events.put)
        return key

    def _read(self, future: Any) -> list[Event]:
        """The event of one finished future (none for a task that was replaced or cancelled by us)."""
        task = self._tasks.pop(future.key, None)
        if task is None:
            return []
        stage, index, config = task
        del self._current[(stage, index)]
        self._restricted.pop(future.key, None)
        reply = self._reply(future)
        if reply is not None:
            if isinstance(reply, RetimeReply):
                return [Retimed(reply.found, reply.device)]
            if isinstance(reply, BenchReply):
                self._benched_on[index] = reply.where
                return [Benched(index, config, reply.outcome, reply.device)]
            return [Compiled(index, config, reply.status, reply.error, reply.seconds, reply.columns, reply.notes)]
        exc = future.exception() if future.status == "error" else None
        # exc None: its result was lost with its worker. (KilledWorker by name: distributed is an optional extra.)
        if exc is None or type(exc).__name__ == "KilledWorker":
            self._note_removed_workers()
            address = self._lost_on.pop(future.key, None) or getattr(getattr(exc, "last_worker", None), "address", None)
            return [Lost(index, config, stage, str(address or "?"))]
        if isinstance(exc, TuneSetupError):
            self.cancel()
            raise TuneSetupError(str(exc))
        error = f"the Dask task failed: {type(exc).__name__}: {exc}"[:300]
        if stage == "rebench":
            return [Retimed(None, self.device)]
        if stage == "compile":
            return [Compiled(index, config, "crashed", error, 0.0)]
        return [Benched(index, config, BenchOutcome("run_error", None, error, 0.0), self.device)]

    def _reply(self, future: Any) -> Any:
        """A finished task's reply; None where it failed, or where its result went with its worker
        before it was fetched (Dask recomputes it, but a compile bound to a gone worker waits forever)."""
        deadline = time.monotonic() + _GATHER_S
        while future.status == "finished":
            try:
                return future.result(timeout=_POLL_S)
            except _TIMEOUTS:  # not fetched yet: the scheduler says whether its worker is gone
                self._note_removed_workers()
                if future.key in self._lost_on or time.monotonic() > deadline:
                    return None
            except Exception:
                if future.status == "finished":
                    raise
                return None  # lost, or its rerun failed: the caller reads which from the future's status
        return None

    def _poll_losses(self) -> list[Event]:
        """Tasks whose worker left the cluster since the last poll (Dask would rerun them silently).

        Read from the scheduler's own record of each worker it removed and the tasks
        that worker was processing, so a task that started and lost its worker
        between two polls is known too. Compiles waiting for workers that are all gone
        (restricted before a loss was known) are submitted again, to the compile
        workers there are now.
        """
        self._polled = time.monotonic()
        if not self._tasks:
            return []
        lost = []
        self._note_removed_workers()
        for key, address in self._lost_on.items():
            if key in self._tasks:  # whether or not Dask has rescheduled it
                stage, index, config = self._tasks.pop(key)
                self._current.pop((stage, index)).cancel()
                self._restricted.pop(key, None)
                lost.append(Lost(index, config, stage, address))
        self._lost_on.clear()
        holding = self.client.processing()
        now = {key for keys in holding.values() for key in keys}
        stranded = [
            key
            for key, allowed in self._restricted.items()
            if key not in now and not any(a in holding for a in allowed)
        ]
        if lost or stranded:
            self._info = (0.0, {})  # the workers changed: ask the scheduler again
        for key in stranded:
            _, index, config = self._tasks[key]
            self.compile(index, config)
        return lost

    def _note_removed_workers(self) -> None:
        """Remember, for each task key, the worker that was running it, or held its result, when the scheduler removed that worker."""
        for stamp, event in self.client.get_events("all"):
            if stamp > self._losses_seen and isinstance(event, dict) and event.get("action") == "remove-worker":
                for key in (*event.get("processing-tasks", ()), *event.get("lost-computed-tasks", ())):
                    self._lost_on[str(key)] = str(event.get("worker", "?"))
                self._losses_seen = stamp

    def _workers(self, fresh: bool = False) -> dict[str, dict]:
        taken, workers = self._info
        if fresh or time.monotonic() - taken > _INFO_S:
            workers = workers_of(self.client)
            self._info = (time.monotonic(), workers)
        return workers

    def _compilers(self, workers: dict[str, dict]) -> list[str]:
        return [a for a, w in workers.items() if not w.get("resources", {}).get(self.resource)]

    def _release(self) -> None:
        if self.job is None:
            return
        try:
            self.client.run(release, self.job.digest, wait=True)
        except Exception:  # best effort: a worker that is gone has no compile processes left to stop
            pass
