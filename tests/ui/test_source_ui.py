"""The Source tab in a real JupyterLab: the cell's tile ops light up their CUDA on sm_80 and sm_90, and back."""

from __future__ import annotations

import pytest
from cells import gemm_cell

from ui.explorer_page import (
    EXPLORER,
    at_1280_with_sidebars,
    bring_into_view,
    dark_theme,
    notebook_page,
    run_in_kernel,
    screenshot,
    scroll_pane_to,
    show_tab,
)

pytestmark = pytest.mark.ui

ARCHS = ("sm_80", "sm_90")
# Resolves once the node has kept its place on screen for three frames.
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
TENSOR_CORE = {"sm_80": "tl::mma_sync", "sm_90": "tl::wgmma_ss"}
# The kernel's machine-code builds wait until a test releases them, so the Source tabs are drawn before the machine
# code arrives, whatever nvcc's cache holds (the builds themselves are the real ones).
HOLD_MACHINE_CODE = """import threading
import tilelab.machine.build as machine_build
machine_code_released = threading.Event()
build_machine_code = machine_build.machine_code
machine_build.machine_code = lambda *args, **kwargs: (machine_code_released.wait(600), build_machine_code(*args, **kwargs))[1]
"""


@pytest.fixture(scope="module")
def lab(lab_server, browser):
    """One page on one notebook holding the GEMM's Explorer for sm_80, then for sm_90."""
    cells = ["%load_ext tilelab", HOLD_MACHINE_CODE] + [gemm_cell(magic=f"--arch {arch}") for arch in ARCHS]
    with notebook_page(lab_server, browser, "source.ipynb", cells) as lab:
        page = lab.page
        page.wait_for_selector(f"{EXPLORER} >> nth=1")
        at_1280_with_sidebars(page)
        for k in range(len(ARCHS)):
            show_tab(page.locator(EXPLORER).nth(k), "Source")
        page.wait_for_selector(f"{EXPLORER} .tl-linked .tl-pane-right >> nth=1")
        yield lab


def _explorer(page, arch: str):
    return page.locator(EXPLORER).nth(ARCHS.index(arch))


def _source(page, arch: str):
    return _explorer(page, arch).locator(".tl-linked")


def _show_pane(source, side: str) -> None:
    """Scroll pane ``side`` into the window (CodeMirror draws only the lines near the visible part)."""
    pane = source.locator(f".tl-pane-{side}")
    pane.evaluate("node => node.scrollIntoView({block: 'center'})")
    pane.evaluate(SETTLED)


def _click_line(source, side: str, text: str) -> None:
    """Click at the start of the first line holding ``text`` (where a reader would click).

    The pane is scrolled into the window first and left to settle: the notebook lays out the
    cells around it for a few frames after a jump, and a click must not land on a moving target.
    """
    _show_pane(source, side)
    scroll_pane_to(source.locator(f".tl-pane-{side}"), text)
    source.locator(f".tl-pane-{side} .cm-line", has_text=text).first.click(position={"x": 4, "y": 4})


def _click_cell_line(source, text: str) -> None:
    _click_line(source, "left", text)


def test_the_note_under_the_panes_points_to_machine_code_once_it_arrives_and_the_panes_stay(lab):
    page = lab.page
    notes = page.locator(f"{EXPLORER} .tl-linked > p.tl-note")
    for k in range(len(ARCHS)):
        assert "not built yet when this was shown" in notes.nth(k).inner_text()
    page.locator(f"{EXPLORER} .tl-pane-left").first.evaluate("node => { node.dataset.drawnBefore = 'yes'; }")

    run_in_kernel(page, "machine_code_released.set()")

    for k in range(len(ARCHS)):
        notes.nth(k).filter(has_text="PTX / SASS, registers and spills: see Machine code.").wait_for(timeout=120_000)
    assert page.locator(f"{EXPLORER} .tl-pane-left[data-drawn-before='yes']").count() == 1  # the panes were kept


@pytest.mark.parametrize("arch", ARCHS)
def test_clicking_t_gemm_in_the_cell_highlights_its_tensor_core_cuda(lab, arch):
    page, source = lab.page, _source(lab.page, arch)

    _click_cell_line(source, "T.gemm(A_shared, B_shared, C_local)")
    _explorer(page, arch).locator(".tl-linked[data-status='linked']").wait_for()
    _show_pane(source, "right")
    selected = source.locator(".tl-pane-right .cm-line.tl-selected")
    source.locator(f".tl-pane-right .cm-line.tl-selected:has-text('{TENSOR_CORE[arch]}')").first.wait_for()

    assert source.locator(".tl-pane-left .cm-line.tl-selected").inner_text().strip().startswith("T.gemm(")
    assert "T.gemm" in source.locator(".tl-status").inner_text()
    right = source.locator(".tl-pane-right .cm-scroller").bounding_box()
    middle = selected.first.bounding_box()
    assert right["y"] <= middle["y"] <= right["y"] + right["height"]  # in view, not past the pane's edge
    bring_into_view(page, f"{EXPLORER} >> nth={ARCHS.index(arch)}")
    screenshot(page, f"source-gemm-{arch}.png")


def test_a_cuda_line_links_back_to_its_cell_line_and_an_unlinked_click_clears(lab):
    page, source = lab.page, _source(lab.page, "sm_90")

    _click_line(source, "right", "tl::wgmma_ss")
    source.locator(".tl-pane-left .cm-line.tl-selected").wait_for()
    assert source.locator(".tl-pane-left .cm-line.tl-selected").inner_text().strip().startswith("T.gemm(")
    assert "found through its tl:: template calls" in source.locator(".tl-status").inner_text()

    _click_cell_line(source, "def matmul(")
    _explorer(page, "sm_90").locator(".tl-linked[data-status='unlinked']").wait_for()
    assert source.locator(".cm-line.tl-selected").count() == 0
    assert "has no CUDA lines" in source.locator(".tl-status").inner_text()


def test_the_tma_copies_link_to_their_t_copy_lines_on_sm90(lab):
    source = _source(lab.page, "sm_90")

    _click_cell_line(source, "T.copy(A[by * block_M, k * block_K], A_shared)")
    _show_pane(source, "right")
    source.locator(".tl-pane-right .cm-line.tl-selected:has-text('tl::tma_load(A_desc')").wait_for()

    texts = source.locator(".tl-pane-right .cm-line.tl-selected").all_inner_texts()
    assert not any("B_desc" in text for text in texts)
    assert source.locator(".tl-pane-right .cm-line:has-text('tl::tma_load(B_desc')").first.get_attribute("class").count("tl-selected") == 0


def test_the_source_tab_reads_in_the_dark_theme(lab):
    page, source = lab.page, _source(lab.page, "sm_90")
    _click_cell_line(source, "T.gemm(A_shared, B_shared, C_local)")
    source.locator(".tl-pane-right .cm-line.tl-selected").first.wait_for()

    with dark_theme(page):
        bring_into_view(page, f"{EXPLORER} >> nth=1")
        screenshot(page, "source-sm_90-dark.png")
        background = page.evaluate("() => getComputedStyle(document.querySelector('.tl-linked .cm-editor')).backgroundColor")
        assert sum(int(v) for v in background[background.index("(") + 1 : -1].split(",")[:3]) < 3 * 100  # dark, not white
