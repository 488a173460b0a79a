"""Helpers for the Explorer's browser tests: open an executed notebook, size the page, switch themes, time things.

Every wait is on a real state (an element, a data attribute the view sets when
it has drawn), never a sleep.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

ARTIFACTS = Path(__file__).parent / "artifacts"
EXPLORER = ".jp-OutputArea-output .tilelab-explorer"

SIDEBARS = """async () => {
  const app = window.jupyterapp;
  const notebook = app.shell.currentWidget;
  app.shell.activateById('filebrowser');
  app.shell.expandRight();
  app.shell.activateById(notebook.id);
}"""

ACTIVE_CELL = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"

# Click a row, then wait until the view says it drew that pass and the browser painted it.
CLICK_AND_TIME = """async ([root, index]) => {
  const view = document.querySelectorAll('.tl-passes')[root];
  const row = [...view.querySelectorAll('.tl-row')].find(r => r.querySelector('.tl-idx').textContent === String(index));
  const start = performance.now();
  row.click();
  await new Promise(resolve => {
    const check = () => (view.dataset.shownPass === String(index) ? resolve() : requestAnimationFrame(check));
    check();
  });
  await new Promise(resolve => requestAnimationFrame(() => resolve()));
  return performance.now() - start;
}"""


# Count the splash screens JupyterLab puts up (and takes down) from now on: a theme switch shows one.
WATCH_SPLASH = """() => {
  const seen = window.__tlSplash = { added: 0, removed: 0 };
  const count = (nodes, key) => { for (const node of nodes) { if (node.id === 'jupyterlab-splash') { seen[key] += 1; } } };
  new MutationObserver(changes => changes.forEach(change => {
    count(change.addedNodes, 'added');
    count(change.removedNodes, 'removed');
  })).observe(document.body, { childList: true });
}"""

# The theme's stylesheet has replaced the other one everywhere (menu, file browser, notebook), and painted:
# the switch's splash came and went, and the first opaque background behind each of those elements is dark
# (or light) as asked (a transparent element says nothing about the theme).
# (Synchronous: wait_for_function takes a returned promise for a truthy answer.)
THEME_LOADED = """(dark) => {
  const splash = window.__tlSplash;
  if (!splash || splash.added === 0 || splash.removed < splash.added) { return false; }
  const opaque = (node) => {
    for (; node; node = node.parentElement) {
      const channels = getComputedStyle(node).backgroundColor.match(/[\\d.]+/g).map(Number);
      if (channels.length < 4 || channels[3] > 0) { return channels; }
    }
    return [255, 255, 255];
  };
  const painted = (selector) => {
    const node = document.querySelector(selector);
    if (!node) { return true; }  // not on the page: nothing to look light
    const [r, g, b] = opaque(node);
    return (r + g + b < 3 * 100) === dark;
  };
  return ['.lm-MenuBar', '.jp-DirListing-content', '.jp-NotebookPanel-notebook'].every(painted);
}"""
NEXT_FRAME = "() => new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)))"


# Press j in the pass list, then wait until the next pass is drawn and painted.
PRESS_J_AND_TIME = """async ([root]) => {
  const view = document.querySelectorAll('.tl-passes')[root];
  const shown = view.dataset.shownPass;
  const start = performance.now();
  view.querySelector('.tl-list').dispatchEvent(new KeyboardEvent('keydown', { key: 'j', bubbles: true }));
  await new Promise(resolve => {
    const check = () => (view.dataset.shownPass !== shown ? resolve() : requestAnimationFrame(check));
    check();
  });
  await new Promise(resolve => requestAnimationFrame(() => resolve()));
  return performance.now() - start;
}"""


@contextlib.contextmanager
def notebook_page(lab_server, browser, name: str, cells: list[str]):
    """A fresh 1280×800 page in its own workspace with ``name`` (``cells``) written, opened, run; yields its Lab."""
    import uuid

    from ui.conftest import Lab, kernels_shut_down_after

    with kernels_shut_down_after(lab_server), browser.page(1280, 800) as page:
        page.set_default_timeout(60_000)
        page.goto(lab_server.url(f"lab/workspaces/{Path(name).stem}-{uuid.uuid4().hex[:8]}") + "&reset")
        page.wait_for_function("() => Boolean(window.jupyterapp)")
        page.evaluate("async () => { await window.jupyterapp.restored; }")
        lab = Lab(page, lab_server)
        open_notebook_with(lab, name, cells)
        yield lab


def open_notebook_with(lab, name: str, cells: list[str]) -> None:
    """Write ``cells`` to ``name``, open it, run every cell and wait for the Explorers."""
    lab.run_notebook(name, cells)
    lab.page.wait_for_selector(f"{EXPLORER} .tl-tab")


def run_in_kernel(page, code: str) -> None:
    """Execute ``code`` in the current notebook's kernel, as a cell would, and wait until it has run."""
    page.evaluate(
        """async (code) => {
            const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
            await kernel.requestExecute({ code }).done;
        }""",
        code,
    )


def at_1280_with_sidebars(page) -> None:
    """A 1280×800 window with JupyterLab's left (files) and right sidebars open."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.evaluate(SIDEBARS)


def bring_into_view(page, selector: str) -> None:
    """Scroll the notebook so that the element at ``selector`` starts at the top of the window."""
    page.locator(selector).first.evaluate("node => node.scrollIntoView({block: 'start'})")


def show_tab(explorer, title: str) -> None:
    """Click the tab called ``title`` and wait until its panel has drawn what it asked the kernel for."""
    explorer.locator(f".tl-tab:text-is('{title}')").click()
    explorer.locator(f".tl-tab.tl-on:text-is('{title}')").wait_for()
    explorer.locator(".tl-tabpanel:visible").filter(has_not_text="loading…").wait_for()


@contextlib.contextmanager
def dark_theme(page):
    """JupyterLab Dark for the duration (the theme is a saved setting: always switch back)."""
    _switch_theme(page, "JupyterLab Dark")
    try:
        yield
    finally:
        _switch_theme(page, "JupyterLab Light")


def _switch_theme(page, theme: str) -> None:
    page.evaluate(WATCH_SPLASH)
    page.evaluate("(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme)
    page.wait_for_function(THEME_LOADED, arg=theme.endswith("Dark"))
    page.evaluate(NEXT_FRAME)


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path))
    return path


def record_timings(section: str, values: dict) -> None:
    """Merge ``values`` under ``section`` into ``artifacts/timings.json`` (other tests add their own sections)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "timings.json"
    timings = json.loads(path.read_text()) if path.exists() else {}
    timings[section] = values
    path.write_text(json.dumps(timings, indent=2) + "\n")


# Scroll a CodeMirror pane down, half a view at a time, until a line holding ``text`` is drawn
# (CodeMirror draws only the lines near the visible part); resolves true when one is.
_SCROLL_TO_TEXT = """async (pane, text) => {
  const drawn = () => [...pane.querySelectorAll('.cm-line')].some(line => line.textContent.includes(text));
  const scroller = pane.querySelector('.cm-scroller');
  for (let top = 0; !drawn() && scroller && top <= scroller.scrollHeight; top += scroller.clientHeight / 2) {
    scroller.scrollTop = top;
    await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  }
  return drawn();
}"""


def scroll_pane_to(pane, text: str) -> None:
    """Bring the first line of ``pane`` (a ``.tl-pane-*`` locator) that holds ``text`` into its drawn part."""
    pane.evaluate("node => node.scrollIntoView({block: 'center'})")
    assert pane.evaluate(_SCROLL_TO_TEXT, text), f"no line holds {text!r}"
