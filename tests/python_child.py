"""A Python script in a child process that, when a test waits for it too long, says where it is stuck."""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

# Stacks on SIGUSR1; and Ctrl-C raises KeyboardInterrupt as in a terminal, even where the test runner was started
# in the background (``(make test &)``, nohup): such a runner's children inherit SIGINT ignored, and Python then
# installs no handler of its own, so the child would never see the interrupt a test sends.
_PRELUDE = (
    "import faulthandler, signal; faulthandler.register(signal.SIGUSR1, all_threads=True)\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
)


def start_python(script: str) -> subprocess.Popen:
    """Run ``script`` in a new Python process; its stdout is a text pipe, its stderr a file ``finish`` reads."""
    stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - it lives as long as the child
    proc = subprocess.Popen([sys.executable, "-c", _PRELUDE + script], stdout=subprocess.PIPE, stderr=stderr, text=True)
    proc.stderr_file = stderr  # type: ignore[attr-defined]
    return proc


def finish(proc: subprocess.Popen, timeout_s: float) -> str:
    """The rest of the child's stdout once it exits; past ``timeout_s``, fail with the stacks of all its threads."""
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        return out
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        try:
            proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        proc.stderr_file.seek(0)  # type: ignore[attr-defined]
        pytest.fail(f"the child did not exit within {timeout_s} s; its stderr and stacks:\n{proc.stderr_file.read()[-6000:]}")  # type: ignore[attr-defined]


def process_ends(pid: int, within_s: float = 60.0) -> bool:
    """Process ``pid`` exits (a zombie not yet reaped has exited too) within ``within_s``. Waited for: a signal is
    delivered when its target next runs, and on a loaded machine a killed process can still be there a moment
    after ``kill()`` has returned (the clean-clone run of 2d375b1 saw one)."""
    return wait_until(lambda: _exited(pid), within_s)


def wait_until(condition, seconds: float = 60.0) -> bool:
    """Whether ``condition()`` holds within ``seconds``, asked every 0.05 s."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _exited(pid: int) -> bool:
    try:
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
