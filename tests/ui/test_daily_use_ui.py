"""The Explorer in daily use, in a real JupyterLab with Chromium: what a kernel engineer meets every day.

A saved notebook reopened after its kernel is gone shows each view's snapshot;
an error names the editor's line and links to it; the dark theme reads (the
selected pass row, the Layouts grid after a switch made on another tab); at
1280×800 with both sidebars a diff is unified or has room on each side; the
side panel follows a running sweep; every CUDA line of a ``T.reduce_max``
links to its cell line. Every wait is on a state, never a sleep.
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path

import nbformat
import pytest
from cells import gemm_cell, softmax_cell
from conftest import cuda_available
from notebook_outputs import error_outputs, silent_gpu_cells

from ui.conftest import Lab
from ui.explorer_page import (
    EXPLORER,
    at_1280_with_sidebars,
    bring_into_view,
    dark_theme,
    notebook_page,
    screenshot,
    show_tab,
)

pytestmark = pytest.mark.ui

GEMM = gemm_cell(magic="--arch sm_90")
BAD_GEMM = gemm_cell(magic="--arch sm_90 --no-machine-code").replace("T.gemm(A_shared", "T.gem(A_shared")
VIEW = ".jp-OutputArea-output.tl-View"  # the output node is the view renderer itself
VIEW_MIME = "application/vnd.tilelab.view+json"
SAVED_VIEW_LIMIT = 250_000  # bytes of one view's output in the saved .ipynb
TUNING_RESULT = """from tilelab.tune.result import TuneResult, TuneRow, TuneStatus

run = TuneResult(kernel_name="matmul", configs=({"block_M": 64}, {"block_M": 128}), swept=("block_M",), device="cpu",
                 compiled=2, benchmarked=2)
run.add(TuneRow(0, {"block_M": 64}, TuneStatus.OK, latency_ms=0.5))
run.add(TuneRow(1, {"block_M": 128}, TuneStatus.OK, latency_ms=0.75))
run
"""

SAVE = """async () => {
  const widget = window.jupyterapp.shell.currentWidget;
  await widget.context.save();
  return widget.context.model.dirty;
}"""

SHUT_DOWN_AND_CLOSE = """async () => {
  const widget = window.jupyterapp.shell.currentWidget;
  await widget.sessionContext.shutdown();
  widget.dispose();
}"""

NOTEBOOK_TEXT = "() => window.jupyterapp.shell.currentWidget.content.node.innerText"
# The computed background of each 10×10 legend swatch in an output.
LEGEND_SWATCH_COLOURS = """(output) => [...output.querySelectorAll('span')]
  .filter(span => { const box = getComputedStyle(span); return box.width === '10px' && box.height === '10px'; })
  .map(span => getComputedStyle(span).backgroundColor)"""
# The tooltip (title) of what is on top at the centre of an element, and whether that centre lies on an image.
TITLE_AT_CENTRE = """(node) => {
  const box = node.getBoundingClientRect(), x = box.left + box.width / 2, y = box.top + box.height / 2;
  const image = node.parentElement.querySelector('img').getBoundingClientRect();
  const onImage = x > image.left && x < image.right && y > image.top && y < image.bottom;
  return [document.elementFromPoint(x, y)?.getAttribute('title'), onImage];
}"""


def test_a_saved_notebook_reopened_without_its_kernel_shows_every_views_snapshot(lab):
    page = lab.page
    lab.run_notebook("reopen.ipynb", ["%load_ext tilelab", GEMM, TUNING_RESULT])
    page.wait_for_selector(f"{VIEW}[data-shown='live'] .tilelab-explorer .tl-tab")
    page.wait_for_selector(f"{VIEW}[data-shown='live'] .tilelab-tuning")

    assert page.evaluate(SAVE) is False
    page.evaluate(SHUT_DOWN_AND_CLOSE)
    saved = json.loads((lab.notebook_dir / "reopen.ipynb").read_text())
    views = [o for c in saved["cells"] for o in c.get("outputs", []) if VIEW_MIME in o.get("data", {})]
    assert len(views) == 2
    assert all(len(json.dumps(view)) <= SAVED_VIEW_LIMIT for view in views), [len(json.dumps(v)) for v in views]

    lab.open_notebook("reopen.ipynb")  # a new kernel: the widgets' models died with the old one
    page.wait_for_selector(f"{VIEW}[data-shown='snapshot'] [data-tilelab='explorer']")
    page.wait_for_selector(f"{VIEW}[data-shown='snapshot'] [data-tilelab='tuning-rows']")
    assert page.locator(f"{VIEW}[data-shown='live']").count() == 0
    text = page.evaluate(NOTEBOOK_TEXT)
    assert "model not found" not in text and "Error displaying widget" not in text
    lab.screenshot("daily-reopened-snapshots.png")
    page.locator(f"{VIEW}[data-shown='snapshot'] details[data-section='passes'] > summary").click()
    with dark_theme(page):  # the snapshot is what a reopened notebook shows: it reads in JupyterLab Dark too
        page.locator(f"{VIEW}[data-shown='snapshot'] details[data-section='passes']").scroll_into_view_if_needed()
        screenshot(page, "daily-reopened-snapshot-dark.png")


EDITOR_LINE = """([cell, line]) => window.jupyterapp.shell.currentWidget.content.widgets[cell].editor.getLine(line - 1)"""
SELECTED = """() => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  const selection = notebook.activeCell.editor.getSelection();
  return [notebook.activeCellIndex, selection.start.line + 1, selection.end.line + 1];
}"""


def test_a_failed_ops_error_names_the_editors_line_and_links_to_it(lab):
    page = lab.page
    lab.run_notebook("error.ipynb", ["%load_ext tilelab", BAD_GEMM])

    explorer = page.locator(EXPLORER).first
    link = explorer.locator(".tl-line-link")
    link.wait_for()
    line = int(link.get_attribute("data-tilelab-line"))
    assert "T.gem(" in page.evaluate(EDITOR_LINE, [1, line])
    assert f"line {line}" in explorer.locator("[data-tilelab='error']").inner_text()
    # Said once: no stderr copy of it, and only the tabs a failed compile can fill.
    assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    assert explorer.locator(".tl-tab").all_inner_texts() in (["Overview"], ["Overview", "Passes"])

    link.click()
    page.wait_for_function(f"() => ({SELECTED})()[0] === 1")
    assert page.evaluate(SELECTED) == [1, line, line]
    lab.screenshot("daily-error-line.png")


# The selected pass row's colours, and the relative contrast of its text on its background.
ROW_COLOURS = """(row) => {
  const parse = (c) => c.match(/[\\d.]+/g).map(Number);
  const opaque = (node) => {
    for (; node; node = node.parentElement) {
      const channels = parse(getComputedStyle(node).backgroundColor);
      if (channels.length < 4 || channels[3] > 0) { return channels; }
    }
    return [255, 255, 255, 1];
  };
  const [br, bg, bb, ba = 1] = parse(getComputedStyle(row).backgroundColor);
  const [pr, pg, pb] = opaque(row.parentElement);
  const back = [br * ba + pr * (1 - ba), bg * ba + pg * (1 - ba), bb * ba + pb * (1 - ba)];
  const text = parse(getComputedStyle(row.querySelector('.tl-name')).color);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const [hi, lo] = [lum(back), lum(text)].sort((a, b) => b - a);
  return { back, text, backLuminance: lum(back), contrast: (hi + 0.05) / (lo + 0.05) };
}"""

# The Layouts canvas: its size, and how many distinct colours it holds and of what luminance its corner is.
CANVAS = """(canvas) => {
  const { width, height } = canvas;
  if (!width || !height) { return { width, height, colours: 0, corner: null }; }
  const pixels = canvas.getContext('2d').getImageData(0, 0, width, height).data;
  const seen = new Set();
  for (let k = 0; k < pixels.length; k += 4 * 97) { seen.add(`${pixels[k]},${pixels[k + 1]},${pixels[k + 2]}`); }
  const corner = (pixels[0] + pixels[1] + pixels[2]) / 3;
  return { width, height, colours: seen.size, corner };
}"""


@pytest.fixture(scope="module")
def gemm_page(lab_server, browser):
    """One 1280×800 page with both sidebars on the GEMM's Explorer, for the theme, diff and screenshot tests."""
    with notebook_page(lab_server, browser, "daily.ipynb", ["%load_ext tilelab", GEMM]) as lab:
        at_1280_with_sidebars(lab.page)
        yield lab


def test_in_dark_the_selected_pass_row_reads_and_layouts_redraws_after_a_switch_made_on_another_tab(gemm_page):
    page = gemm_page.page
    explorer = page.locator(EXPLORER).first
    show_tab(explorer, "Layouts")
    grid = explorer.locator(".tl-lay[data-shown]")
    grid.wait_for()
    show_tab(explorer, "Passes")
    row = explorer.locator(".tl-row.tl-selected").first
    row.wait_for()

    with dark_theme(page):  # switched while the Passes tab shows: the hidden canvas must redraw when shown
        colours = row.evaluate(ROW_COLOURS)
        assert colours["backLuminance"] < 0.2 and colours["contrast"] >= 4.5, colours
        bring_into_view(page, f"{EXPLORER} .tl-passes")
        screenshot(page, "daily-dark-selected-pass.png")

        show_tab(explorer, "Layouts")
        canvas = explorer.locator("canvas.tl-lay-canvas")
        page.wait_for_function("(c) => c.width > 0 && c.height > 0", arg=canvas.element_handle())
        drawn = canvas.evaluate(CANVAS)
        assert drawn["colours"] > 3 and drawn["corner"] < 80, drawn  # a grid, on a dark background
        bring_into_view(page, f"{EXPLORER} .tl-lay")
        screenshot(page, "daily-dark-layouts-after-switch.png")


SIDES = """(passes) => [...passes.querySelectorAll('.cm-mergeViewEditor')].map(side => side.getBoundingClientRect().width)"""


def test_at_1280_with_both_sidebars_a_diff_is_unified_or_has_400_px_a_side(gemm_page):
    page = gemm_page.page
    explorer = page.locator(EXPLORER).first
    show_tab(explorer, "Passes")
    passes = explorer.locator(".tl-passes")
    explorer.locator(".tl-row:has(.tl-name:text-is('tl.LayoutInference'))").first.click()
    page.wait_for_function("(p) => p.dataset.shownPass && p.querySelector('.tl-diff')", arg=passes.element_handle())

    mode = passes.get_attribute("data-shown-mode")
    sides = passes.evaluate(SIDES)
    assert mode == "unified" or min(sides) >= 400, (mode, sides)
    if mode == "unified":  # shown unified for want of room: the view says so, and side by side stays the choice
        assert "side by side needs" in passes.locator(".tl-facts").inner_text()
        assert explorer.locator(".tl-segmented [data-mode='split']").get_attribute("aria-pressed") == "true"
    style = passes.locator(".cm-lineWrapping").first.evaluate("(n) => [getComputedStyle(n).wordBreak, getComputedStyle(n).overflowWrap]")
    assert style == ["normal", "break-word"]  # wraps between tokens, not inside identifiers
    bring_into_view(page, f"{EXPLORER} .tl-passes")
    screenshot(page, "daily-diff-1280-sidebars.png")

    # Wider (both sidebars closed on a 1900 px window): side by side again, each side at least 400 px.
    page.set_viewport_size({"width": 1900, "height": 800})
    page.evaluate("() => { window.jupyterapp.shell.collapseLeft(); window.jupyterapp.shell.collapseRight(); }")
    page.wait_for_function("(p) => p.dataset.shownMode === 'split'", arg=passes.element_handle())
    assert min(passes.evaluate(SIDES)) >= 400
    at_1280_with_sidebars(page)
    page.wait_for_function("(p) => p.dataset.shownMode === 'unified'", arg=passes.element_handle())


OVERFLOW = "(node) => node.scrollWidth - node.clientWidth"


def test_after_an_ir_search_the_pass_list_and_its_hits_need_no_horizontal_scrolling(gemm_page):
    page = gemm_page.page
    explorer = page.locator(EXPLORER).first
    show_tab(explorer, "Passes")
    passes = explorer.locator(".tl-passes")
    passes.locator(".tl-irsearch-input").fill("tma_copy")
    passes.locator(".tl-irsearch-input").press("Enter")
    passes.locator(".tl-hit[data-kind='first']").wait_for()

    assert passes.locator(".tl-list").evaluate(OVERFLOW) <= 0
    assert passes.locator(".tl-hits").evaluate(OVERFLOW) <= 0
    bring_into_view(page, f"{EXPLORER} .tl-passes")
    screenshot(page, "daily-ir-search-1280.png")


def test_screenshots_of_every_tab_light_and_dark_at_1280_with_both_sidebars(gemm_page):
    page = gemm_page.page
    explorer = page.locator(EXPLORER).first
    tabs = explorer.locator(".tl-tab").all_inner_texts()
    assert tabs[:5] == ["Overview", "Passes", "Source", "Layouts", "Machine code"]

    def shoot(theme: str) -> None:
        for title in tabs:
            show_tab(explorer, title)
            if title == "Machine code":  # nvcc builds it in the background after the cell
                explorer.locator(".tl-machine[data-state='ready']").wait_for(timeout=240_000)
            bring_into_view(page, EXPLORER)
            slug = re.sub(r"\W+", "-", title.lower())
            screenshot(page, f"daily-{theme}-{slug}.png")

    shoot("light")
    with dark_theme(page):
        shoot("dark")


CPU_KERNEL = '''import tilelang
import tilelang.cpu.language as C
import tilelab

@tilelang.jit(target="c", out_idx=[-1])
def scale_add(N=4096, block=64, chunk=1):
    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), B: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            acc = C.alloc_local((block,), "float32")
            for i in C.serial(block // chunk):
                for j in C.vectorized(chunk):
                    acc[i * chunk + j] = A[bx * block + i * chunk + j] * 2.0
            for i in C.serial(block):
                Out[bx * block + i] = acc[i] + B[bx * block + i]
    return main
'''
# One compile worker: the configs finish one after another, so the count rises in steps the panel can show.
CPU_SWEEP = """sweep = tilelab.tune(scale_add, block=tilelab.choices([16, 32, 64, 128]), chunk=tilelab.choices([1, 2]),
                     reference=lambda a, b: 2 * a + b, workers=1, rebench=0, db=":memory:")"""

# Record the panel's "done / total configs" of the tuning run each time it changes, and whether the sweep's cell
# (cell 2) was still running then.
WATCH_PANEL = """() => {
  const seen = window.__tlProgress = [];
  const panel = document.querySelector('.tl-Panel');
  const record = () => {
    const facts = panel.querySelector('.tl-Panel-tuning .tl-Panel-facts');
    const match = facts && facts.textContent.match(/(\\d+) \\/ (\\d+) configs/);
    if (!match) { return; }
    const prompt = window.jupyterapp.shell.currentWidget.content.widgets[2].node.querySelector('.jp-InputPrompt');
    const entry = [Number(match[1]), Number(match[2]), prompt.textContent.includes('*')];
    const last = seen[seen.length - 1];
    if (!last || last[0] !== entry[0] || last[2] !== entry[2]) { seen.push(entry); }
  };
  new MutationObserver(record).observe(panel, { childList: true, subtree: true, characterData: true });
}"""


def test_the_side_panel_follows_a_running_sweep(lab):
    page = lab.page
    lab.write_notebook("sweep.ipynb", ["%load_ext tilelab", CPU_KERNEL, CPU_SWEEP])
    lab.open_notebook("sweep.ipynb")
    page.evaluate("() => window.jupyterapp.shell.activateById('tilelab-panel')")
    page.wait_for_selector(".tl-Panel[data-phase='not-loaded']")
    page.evaluate(WATCH_PANEL)

    lab.run_all(timeout_ms=300_000)

    seen = page.evaluate("() => window.__tlProgress")
    while_running = [done for done, total, running in seen if running and 0 < done < total]
    assert len(set(while_running)) >= 2, seen  # the count rose in the panel while the cell ran
    assert while_running == sorted(while_running), seen
    done, total, _ = seen[-1]
    assert done == total == 8, seen
    lab.screenshot("daily-panel-after-sweep.png")


NOTEBOOKS = Path(__file__).parents[2] / "notebooks"
CURRENT = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook shown (others stay open in hidden tabs)
DIRTY = "() => window.jupyterapp.shell.currentWidget.context.model.dirty"
RUN_ABOVE = """async (index) => {
  const widget = window.jupyterapp.shell.currentWidget;
  widget.content.activeCellIndex = index;
  await window.jupyterapp.commands.execute('notebook:run-all-above');
}"""
CELLS_RAN = """(count) => {
  const prompts = [...window.jupyterapp.shell.currentWidget.node.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
  return prompts.slice(0, count).every((p) => /\\[\\d+\\]/.test(p.textContent));
}"""


class PageProblems:
    """The console errors and uncaught page errors of a page from now on, each with the step it happened in."""

    def __init__(self, page) -> None:
        self.seen: list[str] = []
        self.step = "start"
        page.on("console", lambda message: message.type == "error" and self._add(f"console: {message.text}"))
        page.on("pageerror", lambda error: self._add(f"page error: {error}"))

    def _add(self, problem: str) -> None:
        self.seen.append(f"{self.step}: {problem}")


def test_the_quickstart_and_autotuning_notebooks_open_run_and_reopen_without_console_or_page_errors(lab_server, browser):
    for name in ("quickstart.ipynb", "autotuning.ipynb"):
        shutil.copy(NOTEBOOKS / name, lab_server.notebook_dir / name)
    with browser.page(1280, 800) as page:
        page.set_default_timeout(90_000)
        problems = PageProblems(page)
        page.goto(lab_server.url(f"lab/workspaces/shipped-{uuid.uuid4().hex[:8]}") + "&reset")
        page.wait_for_function("() => Boolean(window.jupyterapp)")
        page.evaluate("async () => { await window.jupyterapp.restored; }")
        lab = Lab(page, lab_server)

        # The quickstart: opens unmodified with its saved snapshots, runs, is used, saved, and reopens.
        problems.step = "opening the quickstart"
        lab.open_notebook("quickstart.ipynb")
        at_1280_with_sidebars(page)
        # Not signed by this server, so untrusted: JupyterLab shows each output's sanitised text/html.
        page.locator(".jp-OutputArea-output", has_text="TileLab Explorer — matmul").first.wait_for()
        assert page.evaluate(DIRTY) is False, "the shipped quickstart opened marked as modified"
        problems.step = "running the quickstart"
        lab.run_all(timeout_ms=600_000)
        problems.step = "using the quickstart"
        explorer = page.locator(f"{CURRENT} {EXPLORER}").first
        for title in ("Passes", "Source", "Layouts", "Overview"):
            show_tab(explorer, title)
        problems.step = "saving and closing the quickstart"
        assert page.evaluate(SAVE) is False
        page.evaluate(SHUT_DOWN_AND_CLOSE)
        # The run's saved outputs pass tests/test_notebooks.py's checks (that test leaves the quickstart to this one).
        saved = nbformat.read(lab_server.notebook_dir / "quickstart.ipynb", as_version=4)
        assert all(cell.execution_count for cell in saved.cells if cell.cell_type == "code"), "saved before every cell ran"
        errors, silent = error_outputs(saved), silent_gpu_cells(saved)
        assert not errors, "\n".join(errors)
        assert cuda_available() or not silent, f"GPU-only cells {silent} printed no 'skipped' line without a GPU"
        problems.step = "reopening the quickstart"
        lab.open_notebook("quickstart.ipynb")
        page.wait_for_selector(f"{CURRENT} {VIEW}[data-shown='snapshot'] [data-tilelab='explorer']", state="attached")

        # The autotuning notebook: opens unmodified, runs its first sweep, is saved and reopens.
        problems.step = "opening the autotuning notebook"
        lab.open_notebook("autotuning.ipynb")
        assert page.evaluate(DIRTY) is False, "the shipped autotuning notebook opened marked as modified"
        after_first_sweep = 6  # above it: the setup, the CPU kernel and its grid sweep (3 code cells)
        problems.step = "running the autotuning notebook's first sweep"
        page.evaluate(RUN_ABOVE, after_first_sweep)
        page.wait_for_function(CELLS_RAN, arg=3, timeout=600_000)
        lab.wait_kernel_idle(600_000)
        page.wait_for_selector(f"{CURRENT} {VIEW}[data-shown='live'] .tilelab-tuning", state="attached")
        problems.step = "saving and closing the autotuning notebook"
        assert page.evaluate(SAVE) is False
        page.evaluate(SHUT_DOWN_AND_CLOSE)
        problems.step = "reopening the autotuning notebook"
        lab.open_notebook("autotuning.ipynb")
        # Partly run, so not all of it trusted (JupyterLab signs only a notebook whose every output it made):
        # each output shows its sanitised text/html, the sweep's snapshot too. Offscreen outputs are laid out
        # lazily (content-visibility): present, if not yet visible.
        sweep = page.locator(f"{CURRENT} .jp-OutputArea-output", has_text="8/8 configs, done").first
        sweep.wait_for(state="attached")
        assert page.locator(f"{CURRENT} {VIEW}[data-shown='live']").count() == 0
        # Its timeline is an image, which the sanitiser keeps whole (of an inline SVG it kept only the text).
        timeline = sweep.locator("img.tl-chart")
        timeline.scroll_into_view_if_needed()
        page.wait_for_function("(image) => image.complete && image.naturalWidth > 0", arg=timeline.element_handle())
        # Each bar keeps its tooltip: a box over the image whose title the browser shows on hover (an image shows
        # none of its SVG's titles), and nothing lies over that box.
        title, on_image = sweep.locator(".tl-chart-tip").first.evaluate(TITLE_AT_CENTRE)
        assert on_image and title and title.startswith("block="), title
        # Its legend's swatches keep their colours: a theme colour is written after its plain fallback, which the
        # sanitiser keeps (of a lone var() it kept nothing).
        swatches = sweep.evaluate(LEGEND_SWATCH_COLOURS)
        assert swatches and "rgba(0, 0, 0, 0)" not in swatches, swatches
        assert "Error displaying widget" not in page.evaluate(NOTEBOOK_TEXT)
        screenshot(page, "daily-autotuning-reopened.png")

    assert problems.seen == []


# Resolves once the node has kept its place on screen for three frames (the notebook settles after a jump).
SETTLED = """node => new Promise(resolve => {
  let last = null, still = 0;
  const check = () => {
    const top = node.getBoundingClientRect().top;
    still = top === last ? still + 1 : 0;
    last = top;
    still >= 3 ? resolve() : requestAnimationFrame(check);
  };
  check();
})"""


def test_every_cuda_line_of_a_reduce_max_links_to_its_cell_line_and_the_status_shows_at_800_px(lab_server, browser):
    with notebook_page(lab_server, browser, "softmax.ipynb", ["%load_ext tilelab", softmax_cell(magic="--arch sm_90")]) as lab:
        page = lab.page
        at_1280_with_sidebars(page)
        explorer = page.locator(EXPLORER).first
        show_tab(explorer, "Source")
        source = explorer.locator(".tl-linked")
        source.locator(".tl-pane-right .cm-line").first.wait_for()

        source.locator(".tl-pane-left .cm-line", has_text="T.reduce_max(").click(position={"x": 4, "y": 4})
        status = source.locator(".tl-status")
        page.wait_for_function("(s) => s.textContent.includes('(T.reduce_max) →')", arg=status.element_handle())
        right = source.locator(".tl-pane-right .cm-scroller")
        right.evaluate("(node) => node.scrollIntoView({block: 'center'})")
        right.evaluate(SETTLED)
        selected = "\n".join(source.locator(".tl-pane-right .cm-line.tl-selected").all_inner_texts())
        for emitted in ("for (int i_1", "-CUDART_INF_F", "max(row_max[i_1]", "__syncthreads()", "AllReduce<tl::MaxOp"):
            assert emitted in selected, (emitted, selected)

        # The thread-local loop says where it came from (not "emitted for the kernel as a whole").
        right.evaluate("(node) => { node.scrollLeft = 0; }")  # where a reader clicks: the start of the line
        right.evaluate(SETTLED)
        source.locator(".tl-pane-right .cm-line", has_text="max(row_max[i_1]").click(position={"x": 4, "y": 4})
        page.wait_for_function("(s) => s.textContent.includes('←')", arg=status.element_handle())
        assert "(T.reduce_max)" in status.inner_text() and "kernel as a whole" not in status.inner_text()

        bring_into_view(page, f"{EXPLORER} .tl-linked")
        box = status.bounding_box()
        assert box["y"] + box["height"] <= 800  # the status line is read without scrolling
        screenshot(page, "daily-reduce-max-links.png")
