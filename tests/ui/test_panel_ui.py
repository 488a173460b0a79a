"""The TileLab side panel in a real JupyterLab: lists runs, follows, recovers, opens the live Explorer, clears.

Drives JupyterLab through ``window.jupyterapp`` (exposed by the server fixture)
and waits on real states: the panel's ``data-phase``, rows present, tabs open.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cells import gemm_cell

pytestmark = pytest.mark.ui

GEMM_CELL = gemm_cell(magic="--arch sm_90")
# A second run of the same kernel (another pipeline depth: a new compile, not a cache hit) and a failed attempt.
SECOND_RUN = gemm_cell(stages=2, magic="--arch sm_90 --no-show")
FAILED_RUN = gemm_cell(magic="--arch sm_90 --no-show").replace(
    "T.gemm(A_shared, B_shared, C_local)", "T.gemm(A_shared, B_shared, C_missing)"
)

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
GROUP = ".tl-Panel-group[data-name='matmul']"
RECORD_ROW = f"{GROUP} .tl-Panel-record"
CURRENT_ROW = f"{GROUP} .tl-Panel-record.tl-mod-current"
TUNING_ROW = ".tl-Panel-tuning:has(.tl-Panel-name:text-is('matmul'))"
LIVE = ".jp-MainAreaWidget:not(.lm-mod-hidden) .tl-Live[data-live='true']"


def wait_for_phase(page, phase: str, notebook: str) -> None:
    page.wait_for_selector(f"{PANEL}[data-phase='{phase}'] .tl-Panel-notebook:text-is('{notebook}')")


def test_panel_lists_runs_follows_recovers_opens_the_live_explorer_and_clears(lab_server, lab_page):
    page = lab_page
    # A workspace of its own: nothing restored from the other browser tests' layouts.
    page.goto(lab_server.url("lab/workspaces/tilelab-panel") + "&reset")
    page.wait_for_function("() => Boolean(window.jupyterapp)")
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    page.set_default_timeout(90_000)
    cells = ["%load_ext tilelab", FAILED_RUN, GEMM_CELL, TUNING_CELL, SECOND_RUN]
    lab_server.write_notebook("first.ipynb", cells)
    lab_server.write_notebook("second.ipynb", ["1 + 1"])
    page.evaluate("() => window.jupyterapp.shell.activateById('tilelab-panel')")
    page.wait_for_selector(f"{PANEL}[data-phase='no-notebook']")

    # The runs of one kernel are one group: time, arch, status, the current one marked, the failed attempt folded.
    first = page.evaluate(OPEN_NOTEBOOK, "first.ipynb")
    wait_for_phase(page, "not-loaded", "first.ipynb")
    # The panel retries (briefly "connecting") each time the kernel goes idle: wait for the hint itself.
    page.wait_for_selector(f"{PANEL}[data-phase='not-loaded'] .tl-Panel-status:has-text('%load_ext tilelab')")
    page.evaluate(RUN_ALL, first)
    page.wait_for_selector(f"{GROUP} .tl-Panel-count:text-is('3 runs')")
    # A kernel's run carries the best of its finished sweep, said as such: this lowered run timed nothing.
    current = page.wait_for_selector(f"{CURRENT_ROW}:has-text('tuned best 0.500 ms')").inner_text()
    assert "run 3" in current and "current" in current and "sm_90" in current and "lowered only" in current
    assert ":" in current.split("·")[0]  # the compile's time of day
    visible = page.locator(f"{GROUP} > .tl-Panel-runs > .tl-Panel-record .tl-Panel-run").all_inner_texts()
    assert visible == ["run 3", "run 2"]
    folded = page.wait_for_selector(f"{GROUP} details.tl-Panel-failed")
    assert folded.get_attribute("open") is None and "1 failed attempt" in folded.inner_text()
    run = page.wait_for_selector(TUNING_ROW).inner_text()
    assert "2 / 2 configs" in run and "best 0.500 ms" in run and "block_M=64" in run
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "panel-runs.png"))

    # The panel follows the active notebook: the second kernel has not loaded TileLab.
    page.evaluate(OPEN_NOTEBOOK, "second.ipynb")
    wait_for_phase(page, "not-loaded", "second.ipynb")
    assert page.query_selector(RECORD_ROW) is None
    page.evaluate(ACTIVATE, first)
    wait_for_phase(page, "ready", "first.ipynb")
    page.wait_for_selector(CURRENT_ROW)

    # Selecting a kernel opens its live Explorer: the notebook's widget manager renders it, and it talks to the kernel.
    open_from_panel(page, CURRENT_ROW, "label === 'matmul · sm_90 · run 3'")
    live = page.wait_for_selector(f"{LIVE} .tilelab-explorer")
    live.wait_for_selector(".tl-tab[data-tab='layouts']").click()
    live.wait_for_selector(".tl-lay[data-shown='C_local/0/0']")
    page.screenshot(path=str(ARTIFACTS / "panel-live-explorer.png"))

    # A tuning run opens live too.
    open_from_panel(page, TUNING_ROW, "label === 'Tuning · matmul'")
    page.wait_for_selector(f"{LIVE} :text('block_M')")
    page.screenshot(path=str(ARTIFACTS / "panel-tuning.png"))

    # A restart drops the comm and the live views say so; the panel says how to load TileLab, then re-subscribes.
    page.evaluate(ACTIVATE, first)
    page.evaluate(RESTART, first)
    wait_for_phase(page, "not-loaded", "first.ipynb")
    page.wait_for_selector(".tl-Live[data-live='false'] .tl-Live-stale", state="attached")
    page.evaluate(RUN_ALL, first)
    wait_for_phase(page, "ready", "first.ipynb")
    page.wait_for_selector(CURRENT_ROW)

    # Clear forgets the kernel's records and runs.
    page.click(f"{PANEL} .tl-Panel-clear")
    page.wait_for_selector(f"{PANEL}[data-phase='ready'] .tl-Panel-status:has-text('No kernels compiled yet')")
    assert page.query_selector(RECORD_ROW) is None and page.query_selector(TUNING_ROW) is None


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
