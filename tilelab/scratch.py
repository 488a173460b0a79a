"""Temporary folders named after the process that made them, and the removal of those whose process has ended.

A machine-code build's folder, or a compile worker's, is removed by whoever ends it, but not when the notebook's
kernel is killed (restarted past its grace time, or out of memory) while a build runs or before its workers have
started: nobody is left to remove it. So each folder's name carries its maker's pid, and the first folder a
process makes of a kind removes that kind's folders whose maker has ended.

TileLang writes each compile's build files (a ``tmp*.cpp`` and its ``.so``) to the temporary folder and never removes
them; the compiles TileLab starts write them to :func:`process_scratch` instead, which goes when the process exits.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["process_alive", "process_scratch", "scratch", "scratch_dir", "temporary_files_in"]


def scratch_dir(kind: str) -> str:
    """A new folder ``tilelab-KIND-PID-XXXXXXXX`` in the temporary folder (the caller removes it)."""
    _remove_ended(kind, tempfile.gettempdir())
    return tempfile.mkdtemp(prefix=f"tilelab-{kind}-{os.getpid()}-")


@contextlib.contextmanager
def scratch(kind: str) -> Iterator[str]:
    """``with scratch("machine") as folder:`` a :func:`scratch_dir`, removed at the end of the block."""
    folder = scratch_dir(kind)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def process_scratch() -> str:
    """This process's folder ``tilelab-process-PID-XXXXXXXX``, made on first use (again if something removed it) and
    removed when the process exits; a killed process's goes when the next process makes one."""
    pid = os.getpid()
    with _lock:
        folder = _process_folders.get(pid)
        if folder is None or not Path(folder).is_dir():
            if pid not in _process_folders:  # once a process: a forked child inherits its parent's handlers, not its pid
                atexit.register(_remove_process_scratch, pid)
            folder = _process_folders[pid] = scratch_dir("process")
    return folder


@contextlib.contextmanager
def temporary_files_in(folder: str) -> Iterator[None]:
    """Within the block, Python's temporary files (``tempfile``'s default folder) go to ``folder``.

    The default is one for the whole process, so a thread making a temporary file meanwhile makes it there too.
    Nested and concurrent blocks restore the folder that was in use before the first of them.
    """
    global _redirects, _redirected_from
    with _lock:
        if _redirects == 0:
            _redirected_from = tempfile.tempdir
        _redirects += 1
        tempfile.tempdir = folder
    try:
        yield
    finally:
        with _lock:
            _redirects -= 1
            if _redirects == 0:
                tempfile.tempdir = _redirected_from


_lock = threading.Lock()
_process_folders: dict[int, str] = {}
_redirects = 0
_redirected_from: str | None = None


def _remove_process_scratch(pid: int) -> None:
    if os.getpid() == pid and pid in _process_folders:
        shutil.rmtree(_process_folders[pid], ignore_errors=True)


@functools.cache
def _remove_ended(kind: str, folder: str) -> None:
    """Remove, once per process and folder, this user's ``kind`` folders whose maker has ended."""
    for path in Path(folder).glob(f"tilelab-{kind}-*-*"):
        maker = path.name.removeprefix(f"tilelab-{kind}-").partition("-")[0]
        try:
            mine = path.is_dir() and not path.is_symlink() and path.stat().st_uid == os.getuid()
        except OSError:  # removed meanwhile
            continue
        if mine and maker.isdigit() and not process_alive(int(maker)):
            shutil.rmtree(path, ignore_errors=True)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a number reused since would count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        pass
    return True
