"""Temporary folders named after the process that made them, and the removal of those whose process has ended.

A machine-code build's folder, or a compile worker's, is removed by whoever ends it, but not when the notebook's
kernel is killed (restarted past its grace time, or out of memory) while a build runs or before its workers have
started: nobody is left to remove it. So each folder's name carries its maker's pid, and the first folder a
process makes of a kind removes that kind's folders whose maker has ended.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["process_alive", "scratch", "scratch_dir"]


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
