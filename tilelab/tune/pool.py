"""Compile worker processes, and the session's pool of them kept warm between sweeps.

A worker needs TileLang imported before it can compile (seconds; ~9 s when
sixteen import at once on a 16-core host), then serves sweeps: each sweep
sends it a setup (the kernel, its arguments, the target) and then one config
at a time. Workers are forked, TileLang already imported, by a zygote process
(:mod:`tilelab.tune.zygote`) that pays for the import once; where it cannot
serve, they are spawned as ``python -m tilelab.tune.worker`` as before
(:mod:`tilelab.tune.processes`). The :class:`Pool` keeps idle workers between
sweeps, so a second sweep in the same process sends its first config as soon
as the worker has loaded the kernel. The pool and its zygote are started
ahead by ``%load_ext tilelab`` (in a Jupyter kernel) and by the first
``tune()``; the pool is bounded (:func:`pool_limit`: one worker per CPU, or
``$TILELAB_POOL_MAX``), its workers are killed when the interpreter exits, and
they and the zygote exit by themselves if the notebook's kernel dies.

A worker is reused only under the environment it was started with, as far as
compiles can tell (:func:`~tilelab.tune.processes.compile_key`: TileLang's and
TVM's variables such as ``TILELANG_CACHE_DIR``, CUDA's, the paths; they are
read at import; the paths TileLang's own import adds do not count as a change),
and a zygote forks only for that environment. A worker that
was compiling when its sweep ended early (an interrupt, a timeout) is killed,
never pooled, and so is one that has compiled :data:`RECYCLE_AFTER` configs
(TileLang keeps what it compiled in memory).
"""

from __future__ import annotations

import atexit
import io
import os
import shutil
import tempfile
import threading
import time
from functools import cache

from tilelab.scratch import scratch_dir
from tilelab.tune.processes import compile_key, start_worker, worker_environment, zygote_for
from tilelab.tune.worker import SCRATCH, write_message

__all__ = ["RECYCLE_AFTER", "Pool", "Worker", "pool_limit", "session_pool"]

RECYCLE_AFTER = 256  # configs a worker compiles before the pool lets it go


class Worker:
    """One compile worker process: its pipes, its log, and the config it is compiling.

    ``setup`` (the length-prefixed pickle a sweep sends first) is sent at once when given;
    a pooled worker gets its setup later through :meth:`load`.
    """

    def __init__(self, setup: bytes | None = None) -> None:
        # TileLang's library generator leaves each compile's source and library in the temporary folder: a
        # worker's own is removed with it, whatever ends it.
        self.scratch = scratch_dir("worker")
        self.env = {**worker_environment(), SCRATCH: self.scratch}
        self.log = tempfile.TemporaryFile()  # noqa: SIM115  (lives as long as the worker; closed in stop())
        self.spawned = time.monotonic()
        self.spawned_at = time.time()  # the worker's "alive" message carries its own wall clock: same host
        self.proc = start_worker(self.env, self.log)  # forked by the zygote, or spawned: Popen's interface
        self.requests = io.BufferedWriter(self.proc.stdin)  # writes whole messages; reads stay unbuffered
        self.alive_s: float | None = None  # seconds from the request until TileLang was imported (its cold start)
        self.ready = False  # the current sweep's kernel is loaded
        self.job: tuple[int, dict, float] | None = None  # index, config, started (monotonic)
        self.lane = ""
        self.compiles = 0
        if setup is not None:
            self.load(setup)

    def load(self, setup: bytes) -> None:
        """Send a sweep's setup; the worker answers ``ready`` (or ``setup_failed``)."""
        self.ready = False
        self.requests.write(setup)
        self.requests.flush()

    def alive(self, at: float) -> None:
        """The worker said it had imported TileLang at ``at`` (its ``time.time()``)."""
        if self.alive_s is None:
            self.alive_s = max(0.0, at - self.spawned_at)

    def send(self, index: int, config: dict) -> None:
        write_message(self.requests, ("compile", index, config))
        self.job = (index, config, time.monotonic())
        self.compiles += 1

    def log_tail(self, limit: int = 600) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace").strip()[-limit:]

    def running(self) -> bool:
        return self.proc.poll() is None and not self.proc.stdout.closed

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.release()
        for stream in (self.requests, self.proc.stdout):
            try:
                stream.close()
            except BrokenPipeError:  # flushing to a worker that is gone
                pass
        self.log.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def pool_limit() -> int:
    """The most workers the pool keeps: ``$TILELAB_POOL_MAX``, else one per available CPU."""
    named = os.environ.get("TILELAB_POOL_MAX", "")
    return int(named) if named.isdigit() else len(os.sched_getaffinity(0))


class Pool:
    """Idle compile workers kept between sweeps (one per process: :func:`session_pool`)."""

    def __init__(self) -> None:
        self._idle: list[Worker] = []
        self._lock = threading.Lock()
        atexit.register(self.shutdown)

    def warm(self, count: int | None = None) -> int:
        """Start idle workers until ``count`` (default: :func:`pool_limit`) wait under the current environment.

        Returns how many were started. A pool bounded to none (``TILELAB_POOL_MAX=0``) starts nothing ahead, not
        even the zygote: each sweep then starts its own workers and lets them go when it ends.
        """
        wanted = min(count if count is not None else pool_limit(), pool_limit())
        if wanted <= 0:
            return 0
        zygote_for(worker_environment())  # started ahead, also for workers that die or are recycled later
        env = compile_key(worker_environment())
        with self._lock:
            self._prune()
            matching = sum(compile_key(w.env) == env for w in self._idle)
            started = [Worker() for _ in range(max(0, wanted - matching))]
            self._keep(started)
        return len(started)

    def take(self, count: int) -> tuple[list[Worker], int]:
        """Up to ``count`` idle workers started under the current environment, and how many more to start."""
        env = compile_key(worker_environment())
        with self._lock:
            self._prune()
            matching = [w for w in self._idle if compile_key(w.env) == env][:count]
            self._idle = [w for w in self._idle if w not in matching]
        return matching, count - len(matching)

    def give_back(self, workers: list[Worker]) -> None:
        """Keep the idle, running ``workers`` (none past :data:`RECYCLE_AFTER`); stop the rest.

        Within the limit the newest are kept: a worker given back now displaces the
        longest-idle one (started under an environment that has since changed, say).
        """
        keep = [w for w in workers if w.job is None and w.running() and w.compiles < RECYCLE_AFTER]
        for worker in [w for w in workers if w not in keep]:
            worker.stop()
        with self._lock:
            self._prune()
            self._keep(keep)

    def _keep(self, workers: list[Worker]) -> None:
        """Add ``workers`` to the idle ones and stop the oldest beyond :func:`pool_limit` (under the lock)."""
        self._idle.extend(workers)
        excess = max(0, len(self._idle) - pool_limit())
        for worker in self._idle[:excess]:
            worker.stop()
        self._idle = self._idle[excess:]

    def idle(self) -> list[int]:
        """The process ids of the idle workers."""
        with self._lock:
            self._prune()
            return [w.proc.pid for w in self._idle]

    def shutdown(self) -> None:
        """Stop every idle worker (at interpreter exit, or to free their memory)."""
        with self._lock:
            workers, self._idle = self._idle, []
        for worker in workers:
            worker.stop()

    def _prune(self) -> None:
        gone = [w for w in self._idle if not w.running()]
        for worker in gone:
            worker.stop()
        self._idle = [w for w in self._idle if w not in gone]


@cache
def session_pool() -> Pool:
    """This process's pool (made on first use)."""
    return Pool()
