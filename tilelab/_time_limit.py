"""A time limit on one in-process compile: ``explore(timeout=...)`` and ``%%tilelang --timeout``.

Exploring compiles in the notebook's own process (the passes are recorded
there), so a kernel whose elaboration never returns cannot be killed the way a
tuning worker is. The limit is ``SIGALRM``, which interrupts the main thread as
Ctrl-C does: a :class:`TimeoutError` is raised wherever the compile is, and
raised again every second until the compile gives up (a kernel may catch the
first one). Off the main thread, or when something else already owns
``SIGALRM``, there is no limit (``TimeLimit.active`` says so).

The compilers TileLang runs (nvcc and its cicc and ptxas, or a C++ compiler)
are this process's children in its process group: each time the limit fires,
those started since the block began are killed with their children, which
TileLang itself would leave compiling (TileLab's own tools lead sessions of
their own and are not touched).
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from types import FrameType, TracebackType

__all__ = ["EXPLORE_TIMEOUT_S", "TimeLimit", "check_timeout"]

EXPLORE_TIMEOUT_S = 600.0  # generous: a GEMM lowers in seconds; a kernel past this is stuck, not slow
_AGAIN_S = 1.0


def check_timeout(timeout: float | None) -> None:
    """Refuse a timeout that is not a positive number of seconds (None: no limit)."""
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0):
        raise ValueError(f"timeout={timeout!r}: expected a positive number of seconds (or None: no limit)")


class TimeLimit:
    """``with TimeLimit(seconds, message):`` raises ``TimeoutError(message)`` in the block once ``seconds`` have passed."""

    def __init__(self, seconds: float | None, message: str) -> None:
        self.seconds = seconds
        self.message = message
        self.active = False
        self.expired = False
        self._previous: object = None
        self._since: int | None = None

    def __enter__(self) -> TimeLimit:
        if self.seconds is None or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
            return self
        if signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None) or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
            return self  # the user's own alarm: left alone
        self._previous = signal.signal(signal.SIGALRM, self._expire)
        self._since = _ticks_since_boot()
        self.active = True
        signal.setitimer(signal.ITIMER_REAL, self.seconds, _AGAIN_S)
        return self

    def _expire(self, signum: int, frame: FrameType | None) -> None:
        if self.active:
            self.expired = True
            for pid in _compilers_started_since(self._since):
                _kill(pid)
            raise TimeoutError(self.message)

    def __exit__(self, kind: type | None, error: BaseException | None, traceback: TracebackType | None) -> None:
        if not self.active:
            return
        self.active = False  # first: an alarm that fires now raises nothing
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._previous)  # type: ignore[arg-type]


def _ticks_since_boot() -> int | None:
    """Now, in the clock ticks after boot that ``/proc/PID/stat`` gives a process's start in (None: no ``/proc``)."""
    try:
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return int(uptime * os.sysconf("SC_CLK_TCK")) - 1  # a tick early: the two clocks round apart


def _compilers_started_since(since: int | None) -> list[int]:
    """This process's descendants in its own process group started at tick ``since`` or later."""
    if since is None:
        return []
    facts: dict[int, tuple[int, int, int]] = {}  # pid -> (parent, process group, start)
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split() if entry.name.isdigit() else None
        except OSError:  # ended meanwhile
            continue
        if fields:
            facts[int(entry.name)] = (int(fields[1]), int(fields[2]), int(fields[19]))
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in facts.items():
        children.setdefault(parent, []).append(pid)
    group, found, todo = os.getpgrp(), [], [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            if facts[child][1] == group and facts[child][2] >= since:
                found.append(child)
    return found


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
