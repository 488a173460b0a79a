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
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from tilelab.tune.bench import bench_config
from tilelab.tune.build import KernelSpec, TensorShape
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus, throughput
from tilelab.tune.worker import read_message, write_message

__all__ = ["Sweep", "TuneSetupError", "run_sweep"]


class TuneSetupError(RuntimeError):
    """The compile workers could not start or could not rebuild the kernel."""


@dataclass
class Sweep:
    """Everything one sweep needs besides its result."""

    kernel: Any
    spec: KernelSpec
    args: tuple
    fixed: dict[str, Any]
    choice: Any  # tilelab.targets.TargetChoice
    timeout: float = 120.0
    workers: int | None = None
    reference: Callable | None = None
    rtol: float = 1e-2
    atol: float = 1e-2
    flops: float | Callable[[dict], float] | None = None
    bytes: float | Callable[[dict], float] | None = None
    on_row: list[Callable[[TuneRow], None]] = field(default_factory=list)
    on_progress: list[Callable[[], None]] = field(default_factory=list)


def _shipped(value: Any) -> Any:
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None and hasattr(value, "device"):
        return TensorShape(tuple(int(s) for s in shape), str(dtype))
    return value


class _Worker:
    """One compile worker process and the config it is compiling."""

    def __init__(self, setup: bytes) -> None:
        import tilelab

        env = dict(os.environ)
        root = str(Path(tilelab.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.log = tempfile.TemporaryFile()  # noqa: SIM115  (lives as long as the worker; closed in stop())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tilelab.tune.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            bufsize=0,
            env=env,
            start_new_session=True,
        )
        self.requests = io.BufferedWriter(self.proc.stdin)  # writes whole messages; reads stay unbuffered
        self.requests.write(setup)
        self.requests.flush()
        self.ready = False
        self.job: tuple[int, dict, float] | None = None  # index, config, started

    def send(self, index: int, config: dict) -> None:
        write_message(self.requests, ("compile", index, config))
        self.job = (index, config, time.monotonic())

    def log_tail(self, limit: int = 600) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace").strip()[-limit:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.requests, self.proc.stdout):
            try:
                stream.close()
            except BrokenPipeError:  # flushing to a worker that is gone
                pass
        self.log.close()


class _Run:
    """The state of one running sweep (one instance per :func:`run_sweep` call)."""

    def __init__(self, sweep: Sweep, result: TuneResult, todo: list[tuple[int, dict]], write: Callable) -> None:
        self.sweep, self.result, self.write = sweep, result, write
        self.pending = deque(todo)
        self.bench_queue: deque[tuple[int, dict, float]] = deque()
        self.workers: list[_Worker] = []
        count = sweep.workers or len(os.sched_getaffinity(0))
        self.size = max(1, min(count, len(todo)))
        import pickle

        setup = {
            "spec": sweep.spec,
            "args": tuple(_shipped(a) for a in sweep.args),
            "fixed": {k: _shipped(v) for k, v in sweep.fixed.items()},
            "choice": sweep.choice,
            "sys_path": [p for p in sys.path if p],
        }
        payload = pickle.dumps(setup, protocol=pickle.HIGHEST_PROTOCOL)
        self.setup = len(payload).to_bytes(4, "big") + payload

    def loop(self) -> None:
        self.workers = [_Worker(self.setup) for _ in range(self.size)]
        if self.sweep.choice.runnable:
            import tilelang  # noqa: F401  (while the workers start: the parent compiles from cache later)
        while self.pending or self.bench_queue or any(w.job for w in self.workers):
            self._dispatch()
            compiling = bool(self.pending) or any(w.job for w in self.workers)
            may_bench = bool(self.bench_queue) and (self.sweep.choice.is_cuda or not compiling)
            streams = {w.proc.stdout: w for w in self.workers}
            for stream in wait(list(streams), timeout=0 if may_bench else self._wait_time()):
                self._receive(streams[stream])
            self._expire()
            if may_bench:
                self._bench(*self.bench_queue.popleft())

    def _dispatch(self) -> None:
        for worker in self.workers:
            if worker.ready and worker.job is None:
                if self.pending:
                    worker.send(*self.pending.popleft())
                elif worker.proc.poll() is None:
                    worker.stop()  # no more work: free its memory now
        self.workers = [w for w in self.workers if not w.proc.stdout.closed]

    def _wait_time(self) -> float:
        deadlines = [w.job[2] + self.sweep.timeout - time.monotonic() for w in self.workers if w.job]
        return max(0.0, min(deadlines, default=1.0))

    def _receive(self, worker: _Worker) -> None:
        try:
            message = read_message(worker.proc.stdout)
        except EOFError:
            self._died(worker)
            return
        if message[0] == "ready":
            worker.ready = True
        elif message[0] == "setup_failed":
            raise TuneSetupError(f"compile workers could not rebuild the kernel: {message[1]}")
        else:
            _, index, status, error, seconds = message
            _, config, _ = worker.job
            worker.job = None
            self.result.compiled += 1
            if status == "ok" and self.sweep.choice.runnable:
                self.bench_queue.append((index, config, seconds))
                self._progress()
            else:
                self._finish(TuneRow(index, config, TuneStatus(status), error, compile_s=seconds, device=self.result.device))

    def _died(self, worker: _Worker) -> None:
        code, tail = worker.proc.wait(), worker.log_tail()
        if worker.job is None:
            raise TuneSetupError(f"a compile worker exited ({code}) before it was ready:\n{tail}")
        index, config, started = worker.job
        error = f"compile worker died (exit code {code}){': ' + tail.splitlines()[-1] if tail else ''}"
        self._replace(worker)
        self._finish(TuneRow(index, config, TuneStatus.COMPILE_ERROR, error, compile_s=time.monotonic() - started, device=self.result.device))

    def _expire(self) -> None:
        now = time.monotonic()
        for worker in list(self.workers):
            if worker.job and now - worker.job[2] > self.sweep.timeout:
                index, config, started = worker.job
                self._replace(worker)
                error = f"compile did not finish within {self.sweep.timeout:g} s; the worker was killed"
                self._finish(TuneRow(index, config, TuneStatus.TIMEOUT, error, compile_s=now - started, device=self.result.device))

    def _replace(self, worker: _Worker) -> None:
        worker.stop()
        self.workers.remove(worker)
        if self.pending:
            self.workers.append(_Worker(self.setup))

    def _bench(self, index: int, config: dict, compile_s: float) -> None:
        sweep = self.sweep
        outcome = bench_config(sweep.kernel, sweep.args, {**sweep.fixed, **config}, sweep.choice, sweep.reference, sweep.rtol, sweep.atol)
        self.result.benchmarked += 1
        flops = sweep.flops(config) if callable(sweep.flops) else sweep.flops
        moved = sweep.bytes(config) if callable(sweep.bytes) else sweep.bytes
        row = TuneRow(
            index, config, TuneStatus(outcome.status), outcome.error, outcome.latency_ms,
            throughput(flops, outcome.latency_ms, 1e12), throughput(moved, outcome.latency_ms, 1e9),
            compile_s, outcome.bench_s, self.result.device,
        )  # fmt: skip
        self._finish(row)

    def _finish(self, row: TuneRow) -> None:
        self.write(row)
        self.result.add(row)
        self._progress()
        for callback in self.sweep.on_row:
            callback(row)

    def _progress(self) -> None:
        for callback in self.sweep.on_progress:
            callback()

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.workers = []


def run_sweep(sweep: Sweep, result: TuneResult, todo: list[tuple[int, dict]], write: Callable[[TuneRow], None]) -> TuneResult:
    """Compile and benchmark ``todo`` (index, config) into ``result``; ``write`` stores each row.

    A ``KeyboardInterrupt`` (Ctrl-C, a notebook interrupt) ends the sweep early:
    the workers are killed and ``result.partial`` is set; finished rows stay.
    """
    run = _Run(sweep, result, todo, write)
    result.running = True
    try:
        if todo:
            run.loop()
    except KeyboardInterrupt:
        result.partial = True
    finally:
        run.close()
        result.running = False
    return result
