"""What Dask's nannies, which run in this process, leave in its environment (``tilelab.cluster.local``)."""

from __future__ import annotations

import os
import time


def changed_names(before: dict[str, str], after: dict[str, str]) -> set[str]:
    """The variables set, unset or changed between two copies of ``os.environ``."""
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


def environment_once_no_nanny_is_starting_a_worker(expected: dict[str, str], seconds: float = 30) -> dict[str, str]:
    """This process's environment once it is ``expected`` again, or after ``seconds``.

    The nanny that restarted a worker may still be finishing that start when Dask's restart returns (the old
    process's exit handler starts the worker too)."""
    deadline = time.monotonic() + seconds
    while dict(os.environ) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return dict(os.environ)
