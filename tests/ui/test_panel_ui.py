"""The TileLab side panel in a real JupyterLab: lists, follows, recovers, opens.

Drives JupyterLab through ``window.jupyterapp`` (exposed by the server fixture)
and waits on real states: the panel's ``data-phase``, rows present, tabs open.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cells import gemm_cell

pytestmark = pytest.mark.ui

GEMM_CELL = gemm_cell(magic="--arch sm_90")

TUNING_CELL = """from tilelab.registry import default_registry
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus

run = TuneResult(kernel_name="matmul", configs=({"block_M": 64}, {"block_M": 128}), swept=("block_M",), device="cpu",
                 compiled=2, benchmarked=2)
run.add(TuneRow(0, {"block_M": 64}, TuneStatus.OK, latency_ms=0.5))
run.add(TuneRow(1, {"block_M": 128}, TuneStatus.OK, latency_ms=0.75))
default_registry().track_tuning(run)
"""

OPEN_NOTEBOOK = """async (path) => {
  const app = window.jupyterapp;
  const widget = await app.commands.execute('docmanager:open', { path, factory: 'Notebook' });
  await widget.context.ready;
  await widget.sessionContext.ready;
  app.shell.activateById(widget.id);
  return widget.id;
}"""

ACTIVATE = "(id) => window.jupyterapp.shell.activateById(id)"

RUN_ALL = """async (id) => {
  const app = window.jupyterapp;
  app.shell.activateById(id);
  await app.commands.execute('notebook:run-all-cells');
}"""

RESTART = """async (id) => {
  const widget = [...window.jupyterapp.shell.widgets('main')].find(w => w.id === id);
  await widget.sessionContext.restartKernel();
}"""

ARTIFACTS = Path(__file__).parent / "artifacts"
PANEL = ".tl-Panel"
RECORD_ROW = ".tl-Panel-record:has(.tl-Panel-name:text-is('matmul'))"
TUNING_ROW = ".tl-Panel-tuning:has(.tl-Panel-name:text-is('matmul'))"
SNAPSHOT = ".jp-MainAreaWidget:not(.lm-mod-hidden) .tl-Snapshot iframe.tl-Snapshot-frame"


def wait_for_phase(page, phase: str, notebook: str) -> None:
    page.wait_for_selector(f"{PANEL}[data-phase='{phase}'] .tl-Panel-notebook:text-is('{notebook}')")


def test_panel_lists_follows_recovers_and_opens_the_explorer(lab_server, lab_page):
    page = lab_page
    # A workspace of its own: nothing restored from the other browser tests' layouts.
    page.goto(lab_server.url("lab/workspaces/tilelab-panel") + "&reset")
    page.wait_for_function("() => Boolean(window.jupyterapp)")
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    page.set_default_timeout(90_000)
    lab_server.write_notebook("first.ipynb", ["%load_ext tilelab", GEMM_CELL, TUNING_CELL])
    lab_server.write_notebook("second.ipynb", ["1 + 1"])
    page.evaluate("() => window.jupyterapp.shell.activateById('tilelab-panel')")
    page.wait_for_selector(f"{PANEL}[data-phase='no-notebook']")

    # A kernel compiled in the first notebook is listed.
    first = page.evaluate(OPEN_NOTEBOOK, "first.ipynb")
    wait_for_phase(page, "not-loaded", "first.ipynb")
    # The panel retries (briefly "connecting") each time the kernel goes idle: wait for the hint itself.
    page.wait_for_selector(f"{PANEL}[data-phase='not-loaded'] .tl-Panel-status:has-text('%load_ext tilelab')")
    page.evaluate(RUN_ALL, first)
    facts = page.wait_for_selector(f"{RECORD_ROW}:has-text('best 0.500 ms')").inner_text()
    assert "sm_90" in facts and "lowered only" in facts and "passes" in facts
    run = page.wait_for_selector(TUNING_ROW).inner_text()
    assert "2 / 2 configs" in run and "best 0.500 ms" in run and "block_M=64" in run

    # The panel follows the active notebook: the second kernel has not loaded TileLab.
    page.evaluate(OPEN_NOTEBOOK, "second.ipynb")
    wait_for_phase(page, "not-loaded", "second.ipynb")
    assert page.query_selector(RECORD_ROW) is None
    page.evaluate(ACTIVATE, first)
    wait_for_phase(page, "ready", "first.ipynb")
    page.wait_for_selector(RECORD_ROW)

    # A restart drops the comm; the panel says how to load TileLab, then re-subscribes.
    page.evaluate(RESTART, first)
    wait_for_phase(page, "not-loaded", "first.ipynb")
    page.evaluate(RUN_ALL, first)
    wait_for_phase(page, "ready", "first.ipynb")

    # Selecting the tuning run shows its table; selecting the kernel shows its Explorer,
    # both as static snapshots in sandboxed main-area tabs.
    open_from_panel(page, TUNING_ROW, "label === 'Tuning · matmul'")
    table = page.wait_for_selector(SNAPSHOT)
    assert table.get_attribute("sandbox") == ""
    snapshot = page.frame_locator(SNAPSHOT)
    snapshot.locator("summary").get_by_text("rows").click()  # <details> open without any script
    snapshot.locator("table").get_by_text("block_M").first.wait_for()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "panel-tuning.png"))

    open_from_panel(page, RECORD_ROW, "label.startsWith('matmul')")
    frame = page.wait_for_selector(SNAPSHOT)
    assert frame.get_attribute("sandbox") == ""
    assert "matmul" in (frame.get_attribute("srcdoc") or "")
    page.frame_locator(SNAPSHOT).locator("body").get_by_text("matmul").first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "panel.png"))


def open_from_panel(page, row: str, label_test: str, attempts: int = 3) -> None:
    """Click a panel row until its tab is the current widget (the list may re-render under the click)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    condition = f"() => {{ const w = window.jupyterapp.shell.currentWidget; const label = w ? w.title.label : ''; return {label_test}; }}"
    for attempt in range(attempts):
        page.locator(row).first.click()
        try:
            page.wait_for_function(condition, timeout=30_000)
            return
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise
