"""The Machine code tab in a real JupyterLab: the sm_90 GEMM's HGMMA count, a SASS line linked to its CUDA and cell line,
the PTX of the same CUDA line, the CUDA lines with the most SASS, light and dark at 1280 x 800.

``%%tilelang`` builds the machine code in the background: the test waits for the tab's own state
(``.tl-machine[data-state='ready']``), which it reaches either at once or when the record is replaced.
"""

from __future__ import annotations

import pytest
from cells import gemm_cell

from ui.explorer_page import (
    EXPLORER,
    at_1280_with_sidebars,
    dark_theme,
    notebook_page,
    record_timings,
    screenshot,
    show_tab,
)

pytestmark = pytest.mark.ui

MACHINE = f"{EXPLORER} .tl-machine"
READY = f"{MACHINE}[data-state='ready'] .tl-linked .tl-pane-right .cm-line"

# Bring pane `side` of the Machine code tab into the window and let it settle (the notebook lays out the cells around it
# for a few frames after a jump), then scroll the pane until CodeMirror has drawn a line holding `text` (it draws only
# what is near the visible part); resolves with whether it found one.
SCROLL_TO_TEXT = """async ([side, text]) => {
  const scroller = document.querySelector(`.tl-machine .tl-pane-${side} .cm-scroller`);
  const frame = () => new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  scroller.closest('.tl-pane').scrollIntoView({ block: 'center' });
  for (let last = null, still = 0; still < 3; ) {
    await frame();
    const top = scroller.getBoundingClientRect().top;
    still = top === last ? still + 1 : 0;
    last = top;
  }
  scroller.scrollTop = 0;
  await frame();
  for (;;) {
    const line = [...scroller.querySelectorAll('.cm-line')].find(node => node.textContent.includes(text));
    if (line) {
      scroller.scrollTop += line.getBoundingClientRect().top - scroller.getBoundingClientRect().top - scroller.clientHeight / 3;
      await frame();
      return true;
    }
    if (scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 1) { return false; }
    scroller.scrollTop += scroller.clientHeight * 0.8;
    await frame();
  }
}"""

# Note when the next mouse button goes down (the click Playwright is about to make).
ARM_CLICK = """() => document.addEventListener('mousedown', () => { window.tlClickAt = performance.now(); }, { capture: true, once: true })"""

# Wait until the CUDA pane shows the linked line, and the browser painted it; resolves with the ms since the click.
LINKED_SINCE_CLICK = """async () => {
  const root = document.querySelector('.tl-machine .tl-linked');
  await new Promise(resolve => {
    const check = () => (root.querySelector('.tl-pane-left .cm-line.tl-selected') ? resolve() : requestAnimationFrame(check));
    check();
  });
  await new Promise(resolve => requestAnimationFrame(() => resolve()));
  return performance.now() - window.tlClickAt;
}"""


def _click_sass_line(page, text: str) -> float:
    """Click at the start of the first SASS line holding ``text`` (as a reader would); the ms until its CUDA line shows."""
    assert page.evaluate(SCROLL_TO_TEXT, ["right", text])
    page.evaluate(ARM_CLICK)
    page.locator(f"{MACHINE} .tl-pane-right .cm-line", has_text=text).first.click(position={"x": 4, "y": 4})
    return page.evaluate(LINKED_SINCE_CLICK)


@pytest.fixture(scope="module")
def lab(lab_server, browser):
    """One page on one notebook holding the sm_90 GEMM's Explorer, its Machine code tab open and built, and a cell
    run after it (as a user goes on while nvcc builds)."""
    cells = ["%load_ext tilelab", gemm_cell(magic="--arch sm_90"), "print('the next cell')"]
    with notebook_page(lab_server, browser, "machine.ipynb", cells) as lab:
        at_1280_with_sidebars(lab.page)
        show_tab(lab.page.locator(EXPLORER).first, "Machine code")
        lab.page.wait_for_selector(READY, timeout=180_000)  # nvcc runs in the background after the cell
        yield lab


def _top_of(page, selector: str) -> None:
    """Scroll the notebook so that ``selector`` starts at the top of the window."""
    page.locator(selector).first.evaluate("node => node.scrollIntoView({block: 'start'})")


def _bottom_at(page, selector: str) -> None:
    """Scroll the notebook so that ``selector`` ends at the bottom of the window."""
    page.locator(selector).first.evaluate("node => node.scrollIntoView({block: 'end'})")


def test_the_tab_counts_hgmma_and_shows_a_resource_card_against_hoppers_limits(lab):
    page = lab.page
    machine = page.locator(MACHINE)

    tensor_cores = machine.locator(".tl-machine-counts tr[data-class='tensor core (warpgroup)']")

    assert "HGMMA\u00a0" in tensor_cores.locator(".tl-machine-ops").inner_text()  # a wrap never parts it from its count
    assert int(tensor_cores.locator(".tl-num").inner_text()) > 0
    card = machine.locator(".tl-machine-card").inner_text()
    assert "of 255" in card and "theoretical occupancy" in card and "launchable" in card
    assert machine.locator(".tl-machine-kernel-name").inner_text() == "gemm_kernel"  # one kernel: no picker
    assert machine.locator("select.tl-machine-kernel").count() == 0
    _top_of(page, f"{EXPLORER} .tl-tabbar")
    screenshot(page, "machine-code-sm_90.png")


def test_clicking_an_hgmma_sass_line_shows_its_wgmma_cuda_line_and_the_t_gemm_cell_line(lab):
    page = lab.page
    linked = page.locator(f"{MACHINE} .tl-linked")
    assert "SASS" in linked.locator(".tl-pane-right .tl-pane-title").inner_text()

    milliseconds = _click_sass_line(page, " HGMMA.")

    assert linked.get_attribute("data-status") == "linked"
    assert "wgmma" in linked.locator(".tl-pane-left .cm-line.tl-selected").first.inner_text()
    status = linked.locator(".tl-status").inner_text()
    assert status.startswith("SASS line ") and "← CUDA line " in status
    assert "cell line" in status and "T.gemm(A_shared, B_shared, C_local)" in status
    record_timings("machine_code", {"sass_click_to_linked_ms": round(milliseconds, 1)})
    _bottom_at(page, f"{MACHINE} .tl-status")
    screenshot(page, "machine-code-sm_90-linked.png")


def test_an_unlinked_sass_line_says_it_has_no_cuda_line(lab):
    page = lab.page
    linked = page.locator(f"{MACHINE} .tl-linked")

    assert page.evaluate(SCROLL_TO_TEXT, ["right", ".elftype"])
    linked.locator(".tl-pane-right .cm-line", has_text=".elftype").first.click(position={"x": 4, "y": 4})

    page.wait_for_selector(f"{MACHINE} .tl-linked[data-status='unlinked']")
    assert "has no CUDA line: ptxas recorded no CUDA line" in linked.locator(".tl-status").inner_text()


def test_the_ptx_of_the_selected_cuda_line_is_one_click_away(lab):
    page = lab.page
    machine = page.locator(MACHINE)
    _click_sass_line(page, " HGMMA.")

    machine.locator(".tl-machine-codes .tl-btn[data-code='ptx']").click()
    page.wait_for_selector(f"{MACHINE}[data-code='ptx'] .tl-linked[data-status='linked']")
    # The reader scrolls down to the PTX pane, 4265 lines long (CodeMirror draws only what is in view).
    page.locator(f"{MACHINE} .tl-pane-right").evaluate("node => node.scrollIntoView({block: 'center'})")

    page.wait_for_selector(
        f"{MACHINE}[data-code='ptx'] .tl-linked[data-status='linked'] .tl-pane-right .cm-line.tl-selected"
    )
    assert "PTX" in machine.locator(".tl-pane-right .tl-pane-title").inner_text()
    assert "wgmma.mma_async" in " ".join(machine.locator(".tl-pane-right .cm-line.tl-selected").all_inner_texts())
    machine.locator(".tl-machine-codes .tl-btn[data-code='sass']").click()
    page.wait_for_selector(f"{MACHINE}[data-code='sass'] .tl-linked .tl-pane-right .cm-line")


def test_the_cuda_line_with_the_most_sass_names_its_cell_line_and_one_click_shows_its_sass(lab):
    page = lab.page
    hot = page.locator(f"{MACHINE} .tl-machine-hot")
    summary = hot.locator("summary")
    assert summary.inner_text().startswith("CUDA lines with the most SASS: line ") and " (cell line " in summary.inner_text()

    summary.click()
    hottest = hot.locator(".tl-machine-hot-lines tbody tr").first
    line = hottest.get_attribute("data-cuda-line")
    hottest.click()

    linked = page.wait_for_selector(f"{MACHINE} .tl-linked[data-selected-left='{line}'][data-status='linked']")
    status = linked.query_selector(".tl-status").inner_text()
    assert status.startswith(f"CUDA line {line} (cell line ") and "→ SASS lines " in status
    assert " runs, up to " in status and len(status) < 400  # its hundreds of SASS lines, summed up
    assert hottest.get_attribute("class") == "tl-selected" and "T.copy" in hottest.inner_text()
    _top_of(page, f"{MACHINE} .tl-machine-hot")
    screenshot(page, "machine-code-sm_90-hot-lines.png")

    second = hot.locator(".tl-machine-hot-lines tbody tr").nth(1)
    second.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector(f"{MACHINE} .tl-linked[data-selected-left='{second.get_attribute('data-cuda-line')}']")
    assert second.get_attribute("class") == "tl-selected" and hottest.get_attribute("class") == ""


# Whether the notebook holds, as the GEMM cell's output, a snapshot with the Machine code section (what saving writes).
SNAPSHOT_HAS_MACHINE_CODE = """() => {
  const outputs = window.jupyterapp.shell.currentWidget.content.model.cells.get(1).outputs;
  return Array.from({ length: outputs.length }, (_, k) => outputs.get(k).data['text/html'])
    .some(html => typeof html === 'string' && html.includes("data-section='machine'"));
}"""


def test_saving_the_notebook_keeps_the_explorers_snapshot_with_the_machine_code_built_after_the_cell(lab):
    """The kernel updates the output's snapshot when the machine code lands (the next cell has run by then); the live
    widget stays drawn, with its tab as it was."""
    import nbformat

    page = lab.page
    page.wait_for_function(SNAPSHOT_HAS_MACHINE_CODE, timeout=60_000)
    page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.context.save(); }")

    saved = nbformat.read(lab.notebook_dir / "machine.ipynb", as_version=4)
    html = next(output.data["text/html"] for output in saved.cells[1].outputs if "text/html" in output.get("data", {}))
    assert "data-section='machine'" in html and "HGMMA" in html
    assert "PTX / SASS, registers and spills: see Machine code." in html
    assert page.locator(".tl-View[data-shown='live'] .tilelab-explorer .tl-machine[data-state='ready']").count() == 1


def test_the_tab_reads_in_the_dark_theme(lab):
    page = lab.page

    with dark_theme(page):
        _top_of(page, f"{EXPLORER} .tl-tabbar")
        screenshot(page, "machine-code-sm_90-dark.png")
        _bottom_at(page, f"{MACHINE} .tl-status")
        screenshot(page, "machine-code-sm_90-linked-dark.png")
        text = page.evaluate("() => getComputedStyle(document.querySelector('.tl-machine-resources td')).color")
        editor = page.evaluate(
            "() => getComputedStyle(document.querySelector('.tl-machine .cm-editor')).backgroundColor"
        )

    assert _brightness(text) > 150 and _brightness(editor) < 100  # light text, dark panes


def _brightness(css_colour: str) -> float:
    red, green, blue = (float(v) for v in css_colour[css_colour.index("(") + 1 : -1].split(",")[:3])
    return (red + green + blue) / 3
