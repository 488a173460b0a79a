"""Compile worker processes: forked by the zygote, or spawned as interpreters of their own where it cannot serve.

:func:`start_worker` gives a :class:`WorkerProcess`, which behaves as the :class:`subprocess.Popen`
the runner used to hold (``pid``, ``stdin``, ``stdout``, ``poll``, ``wait``, ``kill``) whichever
way it started. Its pipes exist at once, so the runner can wait on them while the zygote
(:mod:`tilelab.tune.zygote`) still imports TileLang: the request waits in the socket.

One zygote runs per process, for one compile environment (:func:`compile_env`: a changed
``TILELANG_CACHE_DIR`` needs workers, hence a zygote, started under it); one for another
environment is retired. Nothing here fails a sweep: where a zygote cannot start, refuses to fork
(threads, CUDA) or dies, its waiting and future workers are spawned as before, and each one's log
says why. ``TILELAB_ZYGOTE=0`` turns it off. The zygote's children are not this process's: their
exit status comes from the zygote over a pipe, and they are killed through pidfds, which a reused
pid cannot fool.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections import deque
from pathlib import Path
from typing import IO, Any

from tilelab.tune.zygote import BLAS_THREADS, FORK_REQUEST

__all__ = ["WorkerProcess", "Zygote", "compile_env", "start_worker", "worker_environment", "zygote_for"]

_COMPILE_ENV = re.compile(r"^(TILELANG_|TILELAB_|TVM_|CUDA|NVCC|NVIDIA_|PYTHON|LD_|OMP_|CC$|CXX$|PATH$|HOME$|TMPDIR$)")
_STATUS = struct.Struct("!i")
_UNKNOWN_EXIT = 255  # a forked worker outlived its zygote, which alone could have collected its exit status


def worker_environment() -> dict[str, str]:
    """The environment a compile worker starts with: this process's, with the tilelab package on the path."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])  # the folder holding the tilelab package
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def compile_env(env: dict[str, str]) -> dict[str, str]:
    """What of an environment a compile can depend on (a test runner's or a shell's own variables cannot)."""
    return {name: value for name, value in env.items() if _COMPILE_ENV.match(name)}


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
        self.env, self._log = env, log
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

    def became(self, pid: int, pidfd: int) -> None:
        """The zygote forked this worker as ``pid``."""
        with self._lock:
            self._pid, self._pidfd, self.forked = pid, pidfd, True
            if self._killed:  # stopped while the zygote was busy: nobody waits for it any more
                _signal(pidfd)
                self._close("_pidfd")
                self._close("_status")
            self._settled()

    def spawn(self, why: str | None) -> None:
        """Start this worker as an interpreter of its own (``why`` the zygote did not serve it, for its log)."""
        with self._lock:
            if why:
                self._log.write(f"tilelab: this compile worker was started as its own interpreter: {why}\n".encode())
                self._log.flush()
            try:
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
        # The child (and the zygote) hold them now: the worker's exit closes its pipes.
        for fd in (self.ends[0], self.ends[1], self.ends[3]):
            os.close(fd)
        self.ends = []
        self._answered.set()

    def _close(self, name: str) -> None:
        if getattr(self, name) is not None:
            os.close(getattr(self, name))
            setattr(self, name, None)

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
        if self._status is not None:  # the zygote writes the exit status once it has reaped the worker
            if not select.select([self._status], [], [], timeout)[0]:
                return None
            told = os.read(self._status, _STATUS.size)
            self._close("_status")
            if len(told) == _STATUS.size:
                self.returncode = _STATUS.unpack(told)[0]
                return self.returncode
        # The zygote is gone: the pidfd tells that the worker ended, not how.
        if self._pidfd is None or select.select([self._pidfd], [], [], timeout)[0]:
            self.returncode = -signal.SIGKILL if self._killed else _UNKNOWN_EXIT
        return self.returncode

    def kill(self) -> None:
        with self._lock:
            self._killed = True
            if self._spawned is not None:
                self._spawned.kill()
            elif self._pidfd is not None and self.returncode is None:
                _signal(self._pidfd)
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


class _Gone(Exception):
    """The zygote serves no more (the message says why)."""


class Zygote:
    """A zygote process as the pool sees it: ``fork`` sends requests; a listener thread takes the answers."""

    module = "tilelab.tune.zygote"  # what it runs (``python -m``)

    def __init__(self, env: dict[str, str]) -> None:
        self.env, self.key = env, compile_env(env)
        self.failed: str | None = None  # why it serves no more
        self.ready = threading.Event()
        self.info: dict[str, Any] = {}  # its hello: pid, import_s
        self._waiting: deque[WorkerProcess] = deque()
        self._lock = threading.Lock()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115  (its stderr, read when it fails; lives as long as it)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        command = [sys.executable, "-m", self.module, str(theirs.fileno()), str(os.getpid())]
        zygote_env = {BLAS_THREADS: "1", **env}  # one thread to fork; the children take their worker's env
        self.proc = subprocess.Popen(
            command, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log,
            env=zygote_env, start_new_session=True,
        )  # fmt: skip
        theirs.close()
        self._socket = ours
        threading.Thread(target=self._listen, name="tilelab-zygote", daemon=True).start()

    def fork(self, worker: WorkerProcess) -> None:
        """Ask for ``worker`` to be forked; it is spawned instead if this zygote cannot serve it."""
        with self._lock:
            if self.failed is None:
                try:
                    place = json.dumps({"cwd": str(Path.cwd()), "env": worker.env}).encode()
                    socket.send_fds(self._socket, [FORK_REQUEST + place], worker.ends)
                    self._waiting.append(worker)
                    return
                except OSError as exc:
                    self.failed = f"the zygote took no request ({exc})"
        worker.spawn(self.failed)

    def retire(self) -> None:
        """Fork no more (the zygote exits after its last child); requests already sent are still served."""
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_WR)

    def _listen(self) -> None:
        try:
            hello = self._socket.recv(4096)
            if hello.startswith(b"unsafe "):
                self.retire()  # it waits for this to exit
                raise _Gone(f"refused to fork: {hello[7:].decode(errors='replace')}")
            if not hello.startswith(b"ready "):
                raise _Gone(self._exit_reason())
            self.info = json.loads(hello[6:])
            self.ready.set()
            while True:
                answer, fds, _, _ = socket.recv_fds(self._socket, 4096, 1)
                if not answer:
                    raise _Gone(self._exit_reason())
                with self._lock:
                    worker = self._waiting.popleft()
                pid = _STATUS.unpack(answer[: _STATUS.size])[0]
                if pid > 0 and fds:
                    worker.became(pid, fds[0])
                else:
                    worker.spawn(f"the zygote could not fork: {answer[_STATUS.size :].decode(errors='replace')}")
        except (_Gone, OSError, ValueError) as exc:  # whatever ended it, the waiting workers are spawned
            if isinstance(exc, ConnectionResetError):  # it exited with our requests unread
                exc = _Gone(self._exit_reason())
            why = str(exc) if isinstance(exc, _Gone) else f"failed ({exc})"
            with self._lock:
                self.failed = self.failed or f"the zygote {why}"
                waiting, self._waiting = list(self._waiting), deque()
            for worker in waiting:
                worker.spawn(self.failed)

    def _exit_reason(self) -> str:
        code = self.proc.wait()
        self._log.seek(0)
        tail = self._log.read().decode(errors="replace").strip()[-400:]
        return f"exited (code {code}){': ' + tail if tail else ''}"


_current: Zygote | None = None
_lock = threading.Lock()


def _forget_zygote() -> None:
    """In a child forked from this process (multiprocessing, say): the zygote answers the parent, not us."""
    global _current, _lock
    _current, _lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_zygote)


def zygote_for(env: dict[str, str]) -> Zygote | None:
    """The zygote serving ``env``'s compile environment (started now if need be), or None where none can."""
    global _current
    if env.get("TILELAB_ZYGOTE") == "0" or not hasattr(os, "pidfd_open") or not hasattr(socket, "send_fds"):
        return None
    key = compile_env(env)
    with _lock:
        if _current is not None and _current.key == key and (_current.failed is None or not _current.ready.is_set()):
            return _current  # one that failed before it was ready would fail again: its failure is the answer
        if _current is not None:
            _current.retire()
        try:
            _current = Zygote(env)
        except OSError:  # no process could be started: the workers' own spawn will say why
            _current = None
        return _current


def start_worker(env: dict[str, str], log: IO[bytes]) -> WorkerProcess:
    """A compile worker for ``env`` whose stderr goes to ``log``: forked by the zygote where it can, else spawned."""
    worker = WorkerProcess(env, log)
    serving = zygote_for(env)
    if serving is None:
        worker.spawn(None)
    else:
        serving.fork(worker)
    return worker
