"""Which process forks the compile workers: the zygote of this compile environment, or none.

:func:`start_worker` gives a :class:`~tilelab.tune.worker_process.WorkerProcess` (``Popen``'s
interface) at once and asks the zygote (:mod:`tilelab.tune.zygote`) to fork it. Requests made
while the zygote still imports TileLang wait here and are sent by the thread that reads its
answers, so neither ``%load_ext tilelab`` nor a sweep waits for the import.

One zygote runs per process, for one compile environment (:func:`compile_key`: a changed
``TILELANG_CACHE_DIR`` needs workers, hence a zygote, started under it, while the paths
TileLang's import adds to a notebook's environment change nothing); one for another
environment is retired. Nothing here fails a sweep: where a zygote cannot start, refuses to fork
(threads, CUDA), refuses a request or dies, its waiting and future workers are spawned as before,
and each one's log says why; only a zygote that served and then died is replaced.
``TILELAB_ZYGOTE=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
from collections import deque
from pathlib import Path
from typing import IO, Any

from tilelab.tune.worker_process import WorkerProcess
from tilelab.tune.zygote import FORK_REQUEST, STATUS, import_environment

__all__ = ["Zygote", "compile_env", "compile_key", "start_worker", "worker_environment", "zygote_for"]

_log = logging.getLogger(__name__)
# TileLab's own variables other than its machine-code cache (the history, the pool's size) change no compile: a
# notebook that points TILELAB_DB elsewhere keeps its zygote and its warm workers.
_COMPILE_ENV = re.compile(r"^(TILELANG_|TILELAB_CACHE_DIR$|TVM_|CUDA|NVCC|NVIDIA_|PYTHON|LD_|OMP_|CC$|CXX$|PATH$|HOME$|TMPDIR$)")


def worker_environment() -> dict[str, str]:
    """The environment a compile worker starts with: this process's, with the tilelab package on the path."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])  # the folder holding the tilelab package
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def compile_env(env: dict[str, str]) -> dict[str, str]:
    """What of an environment a compile can depend on (a test runner's or a shell's own variables cannot)."""
    return {name: value for name, value in env.items() if _COMPILE_ENV.match(name)}


# What TileLang's import adds to an environment (its TVM and template paths), as the zygotes told it.
_import_adds: dict[str, set[str]] = {}


def compile_key(env: dict[str, str]) -> frozenset[tuple[str, str]]:
    """``env``'s compile environment less what TileLang's import adds (every worker's import adds it): a notebook's
    environment before its first compile imported TileLang, and after, have one key, so the zygote and the
    workers warmed by ``%load_ext tilelab`` serve its sweeps."""
    key = compile_env(env)
    for name, added in list(_import_adds.items()):  # a zygote's listener may add to it meanwhile
        if name in key:
            kept = [entry for entry in key[name].split(os.pathsep) if entry not in added]
            key[name] = os.pathsep.join(kept)
            if not kept:
                del key[name]
    return frozenset(key.items())


class _Gone(Exception):
    """The zygote serves no more (the message says why)."""


class Zygote:
    """A zygote process as the pool sees it: ``fork`` sends requests; a listener thread takes the answers."""

    module = "tilelab.tune.zygote"  # what it runs (``python -m``)

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.failed: str | None = None  # why it serves no more
        self.ready = threading.Event()
        self.settled = threading.Event()  # ready, or failed
        self.info: dict[str, Any] = {}  # its hello (pid, import_s, what the import added) or refusal (why, import_s)
        self._waiting: deque[WorkerProcess] = deque()  # sent, not yet answered
        self._unsent: list[WorkerProcess] = []  # asked for while it imports: sent by the listener once it is ready
        self._lock = threading.Lock()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115  (its stderr, read when it fails; lives as long as it)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        command = [sys.executable, "-m", self.module, str(theirs.fileno()), str(os.getpid())]
        self.proc = subprocess.Popen(
            command, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log,
            env=import_environment(env), start_new_session=True,
        )  # fmt: skip
        theirs.close()
        self._socket = ours
        threading.Thread(target=self._listen, name="tilelab-zygote", daemon=True).start()

    def fork(self, worker: WorkerProcess) -> None:
        """Ask for ``worker`` to be forked; it is spawned instead if this zygote cannot serve it."""
        with self._lock:
            if self.failed is None and not self.ready.is_set():  # a full socket would block the caller meanwhile
                self._unsent.append(worker)
                return
            if self.failed is None and self._send(worker):
                return
        self._spawn(worker)

    def _spawn(self, worker: WorkerProcess, why: str | None = None) -> None:
        """Spawn ``worker`` for ``why`` (default: why this zygote serves no more), noting its import time."""
        worker.spawn(why or self.failed, zygote_import_s=self.info.get("import_s"))

    def _send(self, worker: WorkerProcess) -> bool:
        """Send ``worker``'s request (under the lock); False, and ``failed`` says why, if it cannot be sent."""
        try:
            place = json.dumps({"cwd": worker.cwd, "env": worker.env}).encode()
            socket.send_fds(self._socket, [FORK_REQUEST + place], worker.ends)
        except OSError as exc:
            self.failed = f"the zygote took no request ({exc})"
            return False
        self._waiting.append(worker)
        return True

    def replaceable(self) -> bool:
        """Whether a new zygote may serve in its place: it served, then died (one that failed to start, or
        whose requests were refused, would fail again: its failure is the answer)."""
        return self.failed is not None and self.ready.is_set() and self.proc.poll() is not None

    def retire(self) -> None:
        """Fork no more (the zygote exits after its last child); requests already sent are still served."""
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_WR)

    def _listen(self) -> None:
        try:
            hello = self._socket.recv(4096)
            if hello.startswith(b"unsafe "):
                self.retire()  # it waits for this to exit
                self.info = json.loads(hello[7:])
                raise _Gone(f"refused to fork: {self.info['why']}")
            if not hello.startswith(b"ready "):
                raise _Gone(self._exit_reason())
            self.info = json.loads(hello[6:])
            for name, entries in self.info.get("imported", {}).items():
                _import_adds.setdefault(name, set()).update(entries)
            with self._lock:
                self.ready.set()
                self.settled.set()
                refused = [w for w in self._unsent if self.failed is not None or not self._send(w)]
                self._unsent = []
            for worker in refused:
                self._spawn(worker)
            while True:
                answer, fds, _, _ = socket.recv_fds(self._socket, 4096, 1)
                if not answer:
                    raise _Gone(self._exit_reason())
                with self._lock:
                    worker = self._waiting.popleft()
                pid = STATUS.unpack(answer[: STATUS.size])[0]
                if pid > 0 and fds:
                    worker.became(pid, fds[0], zygote_import_s=self.info.get("import_s"))
                else:
                    self._spawn(worker, f"the zygote could not fork: {answer[STATUS.size :].decode(errors='replace')}")
        except Exception as exc:  # whatever ended it (our own bug included), the waiting workers are spawned
            if isinstance(exc, ConnectionResetError):  # it exited with our requests unread
                exc = _Gone(self._exit_reason())
            why = str(exc) if isinstance(exc, _Gone) else f"failed ({type(exc).__name__}: {exc})"
            with self._lock:
                self.failed = self.failed or f"the zygote {why}"
                waiting, self._waiting, self._unsent = [*self._waiting, *self._unsent], deque(), []
                self._socket.close()  # fork() sees ``failed`` first; a retired zygote's descriptors go too
            self.settled.set()
            for worker in waiting:  # each on its own: one that cannot start must not strand the others
                try:
                    self._spawn(worker)
                except Exception:
                    _log.warning("tilelab: a compile worker could not be spawned after its zygote ended", exc_info=True)

    def _exit_reason(self) -> str:
        code = self.proc.wait()
        self._log.seek(0)
        tail = self._log.read().decode(errors="replace").strip()[-400:]
        return f"exited (code {code}){': ' + tail if tail else ''}"


_current: Zygote | None = None
_lock = threading.Lock()
_IMPORT_WAIT_S = 60.0  # the longest a sweep waits for a zygote's import before starting another


def _forget_zygote() -> None:
    """In a child forked from this process (multiprocessing, say): the zygote answers the parent, not us."""
    global _current, _lock
    _current, _lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_zygote)


def zygote_for(env: dict[str, str]) -> Zygote | None:
    """The zygote serving ``env``'s compile environment (started now if need be), or None where none can."""
    global _current
    if _zygote_unavailable(env) is not None:
        return None
    serving = _current
    if serving is not None and _may_differ_by_the_import(serving.env, env):
        serving.settled.wait(_IMPORT_WAIT_S)  # its hello tells what the import sets; a new one would import too
    with _lock:
        if _current is not None and compile_key(_current.env) == compile_key(env) and not _current.replaceable():
            return _current
        if _current is not None:
            _current.retire()
        try:
            _current = Zygote(env)
        except OSError:  # no process could be started: the workers' own spawn will say why
            _current = None
        return _current


# Before any zygote has told what TileLang's import adds: the variables of the compile environment it sets.
_IMPORT_MAY_SET = frozenset({"PYTHONPATH", "TVM_LIBRARY_PATH"})


def _may_differ_by_the_import(serving: dict[str, str], wanted: dict[str, str]) -> bool:
    """Whether two environments may differ only by what TileLang's import sets, which no zygote has told yet."""
    ours, theirs = compile_key(serving), compile_key(wanted)
    if ours == theirs:
        return False
    differing = {name for name, _ in ours ^ theirs}
    return differing <= (set(_import_adds) or _IMPORT_MAY_SET)


def _zygote_unavailable(env: dict[str, str]) -> str | None:
    """Why no zygote may serve ``env`` at all (turned off, or no pidfds here), or None."""
    if env.get("TILELAB_ZYGOTE") == "0":
        return "the zygote is off (TILELAB_ZYGOTE=0)"
    if not hasattr(os, "pidfd_open") or not hasattr(socket, "send_fds"):
        return "this Python or kernel has no os.pidfd_open or socket.send_fds for a zygote"
    return None


def _why_no_zygote(env: dict[str, str]) -> str:
    """Why :func:`zygote_for` gave no zygote for ``env`` (for the sweep's timeline; the worker's log stays quiet)."""
    return _zygote_unavailable(env) or "the zygote could not be started"


def start_worker(env: dict[str, str], log: IO[bytes]) -> WorkerProcess:
    """A compile worker for ``env`` whose stderr goes to ``log``: forked by the zygote where it can, else spawned."""
    worker = WorkerProcess(env, log)
    serving = zygote_for(env)
    if serving is None:
        worker.spawn(_why_no_zygote(env), logged=False)
    else:
        serving.fork(worker)
    return worker
