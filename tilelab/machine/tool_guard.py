"""Run one CUDA tool for :func:`tilelab.machine.cuda_tools.run_tool`, and end it with all it started once the process
that asked for it has ended: ``python -I -S tool_guard.py ASKER TOOL [ARG ...]``. Exits with the tool's status.

The tool leads a session of its own, which a notebook kernel's end does not reach: a kernel killed (out of memory, or
restarted past its grace time), or exiting while a background build waits, would leave nvcc and its cicc compiling on.
Only the standard library, run by path: it starts in a few tens of milliseconds.
"""

import os
import select
import signal
import sys
import time


def _end_session() -> None:
    os.killpg(0, signal.SIGKILL)  # the tool, all it started and this process: the session's one group


def _poll(asker: int, tool: int) -> int:
    """:func:`_wait` without pidfds (before Linux 5.3, or not Linux): looks 20 times a second."""
    while True:
        pid, status = os.waitpid(tool, os.WNOHANG)
        if pid:
            return status
        try:
            os.kill(asker, 0)
        except ProcessLookupError:
            _end_session()
        time.sleep(0.05)


def _wait(asker: int, tool: int) -> int:
    """The tool's wait status; the session ends first if ``asker`` does."""
    try:
        asker_ended, tool_ended = os.pidfd_open(asker), os.pidfd_open(tool)
    except ProcessLookupError:  # the asker has ended already
        _end_session()
    except (AttributeError, OSError):  # no pidfds here
        return _poll(asker, tool)
    ready, _, _ = select.select([tool_ended, asker_ended], [], [])
    if asker_ended in ready:
        _end_session()
    return os.waitpid(tool, 0)[1]


def main(argv: list[str]) -> int:
    asker, command = int(argv[1]), argv[2:]
    tool = os.fork()
    if tool == 0:
        try:
            os.execvp(command[0], command)
        except OSError as error:
            os.write(2, f"{command[0]}: {error.strerror}\n".encode())
        os._exit(127)
    code = os.waitstatus_to_exitcode(_wait(asker, tool))
    return code if code >= 0 else 128 - code  # killed by signal N: 128 + N, as a shell says


if __name__ == "__main__":
    sys.exit(main(sys.argv))
