"""Browser-test fixtures: one real JupyterLab server and one headless Chromium per session.

Fixtures: ``lab_server`` (session: ``base_url``, ``token``, ``notebook_dir``,
``write_notebook``), ``browser`` (session: a :class:`Browser`, whose
``page(width, height)`` opens a page), ``lab_page`` (a fresh page with
JupyterLab loaded and restored) and ``lab`` (a :class:`Lab` over that page:
``page``, ``base_url``, ``notebook_dir``, plus open a notebook, run all its
cells and wait for the kernel, and save screenshots under ``tests/ui/artifacts/``).
Every wait is on a real state (server answering, kernel idle, an element
present), never a sleep. The server runs in its own process group and is
stopped by that group's id.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("TILELAB_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).parent / "artifacts"
SERVER_START_S = 90


def why_browser_tests_skip() -> str | None:
    """Why the browser tests cannot run here (no Chromium, no Playwright), or None."""
    if not Path(CHROMIUM).exists():
        return f"needs Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401  (only checking it is installed)
    except ImportError:
        return "needs playwright (pip install playwright)"
    return None


@pytest.hookimpl(tryfirst=True)  # before tests/conftest.py's, which groups and orders the tests marked ``ui`` here
def pytest_collection_modifyitems(config, items):
    missing = why_browser_tests_skip()
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.ui)
            if missing:
                item.add_marker(pytest.mark.skip(reason=missing))


@dataclass
class Server:
    base_url: str
    token: str
    notebook_dir: Path
    process: subprocess.Popen

    def url(self, path: str = "lab") -> str:
        return f"{self.base_url}{path}?token={self.token}"

    def write_notebook(self, name: str, cells: list[str]) -> Path:
        """Write ``name`` into the notebook dir with one code cell per string (python3 kernel)."""
        import nbformat

        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        path = self.notebook_dir / name
        nbformat.write(notebook, path)
        return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answering(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory) -> Server:
    """A JupyterLab server on a free port with a token, a temp notebook dir and news turned off."""
    root = tmp_path_factory.mktemp("lab")
    notebook_dir, settings = root / "notebooks", root / "settings"
    notebook_dir.mkdir()
    news = settings / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port, token = _free_port(), secrets.token_hex(16)
    # Settings, runtime files and workspaces in the temp dir: each test opens a workspace of its own, and the
    # Running panel lists every workspace it finds (thousands, in a home directory that kept them, slowed each page).
    env = {
        **os.environ,
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(root / "workspaces"),
        "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
    }
    env["TILELAB_DB"] = str(root / "tilelab.db")  # sweeps run in the browser tests keep their history here
    # No compile workers ahead: a kernel that never tunes starts no zygote (tests/test_tune_timeline.py and
    # tests/test_zygote.py test the pool); a sweep starts its own workers.
    env["TILELAB_POOL_MAX"] = "0"
    # No build check: each page load asked the server whether JupyterLab needs a rebuild (a yarn and a node
    # subprocess, 0.8 CPU-s), which a prebuilt extension never does.
    config = root / "jupyter_server_config.json"
    no_build_check = {"buildCheck": False, "buildAvailable": False}
    config.write_text(json.dumps({"ServerApp": {"tornado_settings": {"page_config_data": no_build_check}}}))
    jupyter = [sys.executable, "-m", "jupyterlab"]
    command = [*jupyter, "--no-browser", "--allow-root", f"--port={port}", f"--IdentityProvider.token={token}"]
    command += [
        "--ServerApp.ip=127.0.0.1",
        "--LabApp.expose_app_in_browser=True",
        f"--ServerApp.root_dir={notebook_dir}",
        f"--config={config}",
    ]
    ARTIFACTS.mkdir(exist_ok=True)
    log = (ARTIFACTS / "jupyterlab-server.log").open("w")
    process = subprocess.Popen(
        command, cwd=notebook_dir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    base_url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + SERVER_START_S
    try:
        while not _answering(f"{base_url}api/status?token={token}"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not start; see {ARTIFACTS / 'jupyterlab-server.log'}")
            time.sleep(0.2)  # polling the server's real state, not waiting for time to pass
        yield Server(base_url, token, notebook_dir, process)
    finally:
        os.killpg(os.getpgid(process.pid), signal.SIGTERM)
        process.wait(timeout=30)
        log.close()


class Browser:
    """The session's headless Chromium with one profile on disk. Its pages share that profile's HTTP cache, so
    V8 compiles JupyterLab's scripts once and reuses the code after (a page in a fresh context compiled them
    again: about 0.7 CPU-s of each test's page load). They share its storage too, which isolates nothing a test
    needs: JupyterLab keeps a page's state in its workspace, on the server, and each test opens a workspace of its own."""

    def __init__(self, profile) -> None:
        self.profile = profile

    @contextlib.contextmanager
    def page(self, width: int, height: int):
        """A new ``width``×``height`` page; it, and every page opened from it, is closed after the block."""
        before = set(self.profile.pages)
        page = self.profile.new_page()
        page.set_viewport_size({"width": width, "height": height})
        try:
            yield page
        finally:
            for opened in set(self.profile.pages) - before:
                opened.close()


@pytest.fixture(scope="session")
def browser(tmp_path_factory) -> Browser:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        profile = playwright.chromium.launch_persistent_context(
            tmp_path_factory.mktemp("chromium-profile"), executable_path=CHROMIUM, args=["--no-sandbox"]
        )
        yield Browser(profile)
        profile.close()


class Lab:
    """One browser page on the session's JupyterLab, with notebook helpers."""

    def __init__(self, page, server: Server) -> None:
        self.page = page
        self.server = server
        self.base_url = server.base_url
        self.notebook_dir = server.notebook_dir

    def write_notebook(self, name: str, cells: list[str]) -> Path:
        return self.server.write_notebook(name, cells)

    def run_notebook(self, name: str, cells: list[str]) -> None:
        """Write ``name`` with ``cells``, open it and run every cell (:meth:`run_all`)."""
        self.write_notebook(name, cells)
        self.open_notebook(name)
        self.run_all()

    def open_notebook(self, name: str, timeout_ms: int = 120_000) -> None:
        """Open ``name`` in JupyterLab and wait until its kernel is ready and idle."""
        self.page.evaluate(
            """async (path) => {
                const app = window.jupyterapp;
                const widget = await app.commands.execute('docmanager:open', { path, factory: 'Notebook' });
                await widget.context.ready;
                await widget.sessionContext.ready;
                app.shell.activateById(widget.id);
            }""",
            name,
        )
        self.wait_kernel_idle(timeout_ms)

    def wait_kernel_idle(self, timeout_ms: int = 120_000) -> None:
        self.page.wait_for_function(
            """() => {
                const widget = window.jupyterapp.shell.currentWidget;
                const context = widget && widget.sessionContext;
                const kernel = context && context.session && context.session.kernel;
                return Boolean(context && context.isReady && kernel && kernel.status === 'idle');
            }""",
            timeout=timeout_ms,
        )

    def run_all(self, timeout_ms: int = 180_000) -> None:
        """Run every cell and wait until the last one has run and the kernel is idle."""
        self.page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        self.page.wait_for_function(
            """() => {
                const widget = window.jupyterapp.shell.currentWidget;
                if (!widget) { return false; }
                const prompts = [...widget.node.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')];
                return prompts.length > 0 && prompts.every((p) => /\\[\\d+\\]/.test(p.textContent));
            }""",
            timeout=timeout_ms,
        )
        self.wait_kernel_idle(timeout_ms)

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / name
        self.page.screenshot(path=str(path), full_page=True)
        return path


def _api(server: Server, method: str, path: str) -> Any:
    request = urllib.request.Request(f"{server.base_url}api/{path}?token={server.token}", method=method)
    with urllib.request.urlopen(request, timeout=60) as response:
        body = response.read()
    return json.loads(body) if body else None


@contextlib.contextmanager
def kernels_shut_down_after(server: Server):
    """Shut down the kernels started inside the block, so that no test leaves a kernel (and its compile workers)
    running while the rest of the session runs."""
    before = {kernel["id"] for kernel in _api(server, "GET", "kernels")}
    try:
        yield
    finally:
        for kernel in _api(server, "GET", "kernels"):
            if kernel["id"] not in before:
                try:
                    _api(server, "DELETE", f"kernels/{kernel['id']}")
                except urllib.error.HTTPError as error:  # 404: it had already gone
                    if error.code != 404:
                        raise


@pytest.fixture(autouse=True)
def no_kernel_left_running(lab_server):
    """Every browser test shuts down the kernels it started."""
    with kernels_shut_down_after(lab_server):
        yield


@pytest.fixture
def lab_page(lab_server, browser):
    """A fresh page with JupyterLab loaded and restored; closed after the test."""
    with browser.page(1500, 1100) as page:
        # A fresh workspace per test: the default one would reopen the previous test's notebooks.
        page.goto(lab_server.url(f"lab/workspaces/test-{uuid.uuid4().hex[:8]}") + "&reset")
        page.wait_for_function("() => Boolean(window.jupyterapp)", timeout=60_000)
        page.evaluate("async () => { await window.jupyterapp.restored; }")
        yield page


@pytest.fixture
def lab(lab_server, lab_page) -> Lab:
    """:class:`Lab` helpers over ``lab_page``."""
    return Lab(lab_page, lab_server)
