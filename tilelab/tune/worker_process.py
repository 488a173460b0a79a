"""A compile worker's process, with :class:`subprocess.Popen`'s interface, forked by the zygote or spawned.

The runner and the pool hold a worker's process as they held the ``Popen`` of ``python -m
tilelab.tune.worker``: ``pid``, ``stdin``, ``stdout``, ``poll``, ``wait``, ``kill``. Its pipes
are made here, at once, and the child's ends are kept until a process holds them: the zygote's
fork (:meth:`WorkerProcess.became`) or, where the zygote cannot serve, a spawned interpreter
(:meth:`WorkerProcess.spawn`). A forked worker is the zygote's child, not ours: its exit status
comes from the zygote over a status pipe, and it is killed through a pidfd, which a reused pid
cannot fool.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

from tilelab.tune.timeline import WorkerStart
from tilelab.tune.zygote import STATUS

__all__ = ["WorkerProcess"]

_UNKNOWN_EXIT = 255  # a forked worker outlived its zygote, which alone could have collected its exit status


class WorkerProcess:
    """A compile worker's process, with :class:`subprocess.Popen`'s interface, however it was started.

    Until the zygote answers, ``poll`` says it runs and ``pid`` waits for the answer.
    """

    def __init__(self, env: dict[str, str], log: IO[bytes]) -> None:
        stdin, requests = os.pipe()
        replies, stdout = os.pipe()
        self._status, status = os.pipe()
        self.stdin = open(requests, "wb", buffering=0)  # noqa: SIM115  (closed by the worker's stop())
        self.stdout = open(replies, "rb", buffering=0)  # noqa: SIM115
        self.ends = [stdin, stdout, log.fileno(), status]  # the child's, kept until it holds them
        self.returncode: int | None = None
        self.forked = False
        self.why_spawned: str | None = None  # why the zygote did not serve it (the line its log has)
        self.zygote_import_s: float | None = None  # the zygote's own import time, where known
        self.env, self._log = env, log
        try:
            self.cwd = str(Path.cwd())  # where a spawned worker would start
        except OSError:  # removed since: the zygote's own folder will do
            self.cwd = ""
        self._pid: int | None = None
        self._pidfd: int | None = None
        self._spawned: subprocess.Popen | None = None
        self._answered = threading.Event()
        self._lock = threading.Lock()
        self._killed = False

    @property
    def pid(self) -> int:
        self._answered.wait()
        return self._spawned.pid if self._spawned is not None else self._pid

    @property
    def started(self) -> WorkerStart | None:
        """How it started (forked, or spawned and why), for the sweep's timeline; None until it has."""
        if not self._answered.is_set():
            return None
        return WorkerStart(self.forked, None if self.forked else self.why_spawned, self.zygote_import_s)

    def became(self, pid: int, pidfd: int, zygote_import_s: float | None = None) -> None:
        """The zygote (its import took ``zygote_import_s``) forked this worker as ``pid``."""
        with self._lock:
            self._pid, self._pidfd, self.forked = pid, pidfd, True
            self.zygote_import_s = zygote_import_s
            if self._killed:  # stopped while the zygote was busy: nobody waits for it any more
                _signal(pidfd)
                self._close("_pidfd")
                self._close("_status")
            self._settled()

    def spawn(self, why: str | None, zygote_import_s: float | None = None, logged: bool = True) -> None:
        """Start this worker as an interpreter of its own: ``why`` the zygote did not serve it (for its log
        unless not ``logged``, and the sweep's timeline), the zygote's import time if it got that far."""
        with self._lock:
            self.why_spawned, self.zygote_import_s = why, zygote_import_s
            try:
                if why and logged and not self._killed:  # a worker stopped meanwhile has closed its log
                    self._log.write(f"tilelab: this compile worker was started as its own interpreter: {why}\n".encode())
                    self._log.flush()
                if not self._killed:
                    self._spawned = subprocess.Popen(
                        [sys.executable, "-m", "tilelab.tune.worker"], stdin=self.ends[0], stdout=self.ends[1],
                        stderr=self.ends[2], env=self.env, start_new_session=True,
                    )  # fmt: skip
            except OSError as exc:  # the runner finds a worker that exited before it was ready, and its log
                self._log.write(f"tilelab: no compile worker could be started: {exc}\n".encode())
                self.returncode = 1
            finally:
                self._close("_status")  # a spawned worker's exit status comes from waiting for it
                self._settled()

    def _settled(self) -> None:
        # The child (and the zygote) hold them now: the worker's exit closes its pipes. Once only: a
        # second close of a number could close whatever descriptor has been given that number since.
        ends, self.ends = self.ends, []
        for fd in (ends[0], ends[1], ends[3]) if ends else ():
            os.close(fd)
        self._answered.set()

    def _close(self, name: str) -> None:
        """Close the descriptor in attribute ``name`` once (under the lock)."""
        fd = getattr(self, name)
        if fd is not None:
            setattr(self, name, None)
            os.close(fd)

    def poll(self) -> int | None:
        return self._finished(0.0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._finished(timeout)
        if code is None:
            raise subprocess.TimeoutExpired("tilelab.tune.worker", timeout)
        return code

    def _finished(self, timeout: float | None) -> int | None:
        """The exit code, once the worker has exited within ``timeout`` seconds (None: wait)."""
        if self.returncode is not None or not self._answered.wait(timeout):
            return self.returncode
        if self._spawned is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.returncode = self._spawned.wait(timeout)
            return self.returncode
        status = self._status
        if status is not None:  # the zygote writes the exit status once it has reaped the worker
            if not select.select([status], [], [], timeout)[0]:
                return None
            with self._lock:
                if self._status is None:  # released meanwhile by another thread
                    return self.returncode
                told = os.read(self._status, STATUS.size)
                self._close("_status")
            if len(told) == STATUS.size:
                self.returncode = STATUS.unpack(told)[0]
                return self.returncode
        # The zygote is gone: the pidfd tells that the worker ended, not how.
        if self._pidfd is None or select.select([self._pidfd], [], [], timeout)[0]:
            self.returncode = -signal.SIGKILL if self._killed else _UNKNOWN_EXIT
        return self.returncode

    def kill(self) -> None:
        """Kill the worker and what it started: it leads a session of its own, and an nvcc or a compiler it ran
        would otherwise compile on, orphaned, taking a core from the configs that follow."""
        with self._lock:
            self._killed = True
            if self._spawned is not None:
                if self._spawned.returncode is None:  # not waited for: its pid is still its own
                    _signal_group(self._spawned.pid)
            elif self._pidfd is not None and self.returncode is None:
                _signal(self._pidfd)
                _signal_group(self._pid)
            elif not self._answered.is_set():  # not forked yet: the zygote's answer finds it killed
                self.returncode = -signal.SIGKILL

    def release(self) -> None:
        """Close what is left of its descriptors (after it has exited)."""
        with self._lock:
            self._close("_status")
            self._close("_pidfd")


def _signal(pidfd: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it has exited already
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)


def _signal_group(pid: int) -> None:
    """SIGKILL to the process group ``pid`` leads, as long as any of it lives (its number is taken till then)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
