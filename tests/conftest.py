"""Shared fixtures: one IPython shell with TileLab loaded, GPU detection, example kernels."""

from __future__ import annotations

import functools
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
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group(item)))
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (none here)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _group(item) -> str:
    """Which tests share one pytest-xdist worker (make test runs ``-n auto --dist loadgroup``): a module's
    tests, so its fixtures are made once; every browser test, so one JupyterLab and one Chromium serve them
    all; every test on the PostgreSQL server, so one server does. A test marked ``spread`` (a slow one that
    shares nothing, such as one notebook's run) is a group of its own, so the workers share the slow ones."""
    if item.get_closest_marker("spread"):
        return item.nodeid
    if Path(str(item.fspath)).parent.name == "ui":
        return "ui"
    if "postgres_server" in getattr(item, "fixturenames", ()):
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
def machine_code_cache(tmp_path_factory):
    """Tests build their machine code afresh: TileLab's machine-code cache lives in a temporary directory."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TILELAB_CACHE_DIR", str(tmp_path_factory.mktemp("tilelab-cache")))
        yield
