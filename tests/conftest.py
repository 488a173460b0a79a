"""Shared fixtures: one IPython shell with TileLab loaded, GPU detection, example kernels."""

from __future__ import annotations

import collections
import functools
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@functools.cache
def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups (it runs last)
def pytest_collection_modifyitems(config, items):
    on_postgres = {item.module.__name__ for item in items if "postgres_server" in getattr(item, "fixturenames", ())}
    group_of = {item.nodeid: _group(item, on_postgres) for item in items}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(group_of[item.nodeid]))
    size = collections.Counter(group_of.values())
    items.sort(key=lambda item: _dispatch_order(item, size[group_of[item.nodeid]]))
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (none here)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _browser_test(item) -> bool:
    return item.get_closest_marker("ui") is not None  # tests/ui/conftest.py marks them, first


def _dispatch_order(item, group_size: int) -> tuple[int, int]:
    """The workers take groups in the order of their first test (make test passes ``--no-loadscope-reorder``; by
    default pytest-xdist sends the groups of fewest tests last, and those are the slow ones: a notebook, a bench
    smoke run, while the other worker has nothing left). So: the browser tests first (one group, a quarter of the
    run), then the slow tests, then the rest, the groups of most tests first. The test count stands for the time:
    the small groups left at the end fill in, and neither worker waits long for the other (in collection order the
    zygote's 16 tests, 44 s, came last, and the other worker sat idle for 40 s)."""
    if _browser_test(item):
        return (0, 0)
    if item.get_closest_marker("slow") or item.get_closest_marker("spread"):
        return (1, 0)
    return (2, -group_size)


def _group(item, on_postgres: set[str]) -> str:
    """Which tests share one pytest-xdist worker (make test runs ``-n auto --dist loadgroup``): a module's
    tests, so its fixtures are made once; every browser test, so one JupyterLab and one Chromium serve them
    all; every module with a test on the PostgreSQL server (``on_postgres``), whole, so one server does and the
    module's own fixtures are still made once (tests/test_cluster.py's cluster, whose worker processes import
    TileLang, was started twice when only its PostgreSQL tests joined that group). A test marked ``spread`` (a
    slow one that shares nothing, such as one notebook's run) is a group of its own, so the workers share the
    slow ones."""
    if item.get_closest_marker("spread"):
        return item.nodeid
    if _browser_test(item):
        return "ui"
    if item.module.__name__ in on_postgres:
        return "postgres"
    return item.module.__name__


@pytest.fixture(scope="session")
def ip():
    """The IPython shell used by magic tests, with ``%load_ext tilelab`` done."""
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.history_manager.enabled = False
    shell.run_line_magic("load_ext", "tilelab")
    return shell


@pytest.fixture(scope="session")
def postgres_server():
    """One real PostgreSQL server (Debian's) for the whole run, on a free localhost port; each test takes a database."""
    from postgres_server import running_server

    with running_server() as server:
        yield server


@pytest.fixture(scope="session", autouse=True)
def run_caches(tmp_path_factory):
    """TileLab's machine-code cache and TileLang's kernel cache start empty in each run and never touch the home
    directory: both live in the run's temporary directory, shared by its pytest-xdist workers (their entries are
    written atomically), so a kernel built by one worker's tests is a hit for the other's."""
    base = tmp_path_factory.getbasetemp()
    run = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # popen-gw0/ sits in the run's folder
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TILELAB_CACHE_DIR", str(run / "tilelab-cache"))
        patch.setenv("TILELANG_CACHE_DIR", str(run / "tilelang-cache"))
        yield
