"""A time limit on one in-process compile: ``explore(timeout=...)`` and ``%%tilelang --timeout``.

Exploring compiles in the notebook's own process (the passes are recorded
there), so a kernel whose elaboration never returns cannot be killed the way a
tuning worker is. The limit is ``SIGALRM``, which interrupts the main thread as
Ctrl-C does: a :class:`TimeoutError` is raised wherever the compile is, and
raised again every second until the compile gives up (a kernel may catch the
first one). Off the main thread, or when something else already owns
``SIGALRM``, there is no limit (``TimeLimit.active`` says so).
"""

from __future__ import annotations

import signal
import threading
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

    def __enter__(self) -> TimeLimit:
        if self.seconds is None or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
            return self
        if signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None) or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
            return self  # the user's own alarm: left alone
        self._previous = signal.signal(signal.SIGALRM, self._expire)
        self.active = True
        signal.setitimer(signal.ITIMER_REAL, self.seconds, _AGAIN_S)
        return self

    def _expire(self, signum: int, frame: FrameType | None) -> None:
        if self.active:
            self.expired = True
            raise TimeoutError(self.message)

    def __exit__(self, kind: type | None, error: BaseException | None, traceback: TracebackType | None) -> None:
        if not self.active:
            return
        self.active = False  # first: an alarm that fires now raises nothing
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._previous)  # type: ignore[arg-type]
