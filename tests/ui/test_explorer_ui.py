"""The Explorer in a real JupyterLab: tabs, a pass diff, linked source lines, a plotly layout plot."""

from __future__ import annotations

import pytest
from cells import gemm_cell

pytestmark = pytest.mark.ui

GEMM_CELL = gemm_cell(magic="--arch sm_90")

EXPLORER = ".jp-OutputArea-output .tilelab-explorer"


def test_the_explorer_shows_tabs_a_pass_diff_linked_source_and_a_layout_plot(lab):
    lab.write_notebook("explorer.ipynb", ["%load_ext tilelab", GEMM_CELL])
    lab.open_notebook("explorer.ipynb")

    lab.run_all()
    page = lab.page
    explorer = page.wait_for_selector(EXPLORER)
    tabs = explorer.query_selector_all(".lm-TabBar-tab")
    assert [tab.inner_text().strip() for tab in tabs] == ["Overview", "Passes", "Source", "Layouts"]
    assert "lowered only" in explorer.inner_text()

    # Passes: select LayoutInference and see its diff, fetched from the kernel on selection.
    tabs[1].click()
    row = page.wait_for_selector(f"{EXPLORER} .tl-pass-row.tl-changed:has(.tl-name:text-is('tl.LayoutInference'))")
    row.click()
    page.wait_for_selector(f"{EXPLORER} .tl-detail-head:has-text('tl.LayoutInference')")
    assert page.query_selector_all(f"{EXPLORER} .tl-diff .tl-diff-add")
    page.select_option(f"{EXPLORER} select.tl-mode", "split")
    page.wait_for_selector(f"{EXPLORER} .tl-diff-split")
    lab.screenshot("explorer-passes.png")

    # Source: a linked Python line highlights the device lines it became.
    tabs[2].click()
    page.locator(f"{EXPLORER} .tl-pane-python .tl-line.tl-linked").first.click()
    page.wait_for_selector(f"{EXPLORER} .tl-pane-device .tl-line.tl-hl")
    lab.screenshot("explorer-source.png")

    # Layouts: the figure is built when the tab opens and drawn by plotly.
    tabs[3].click()
    page.wait_for_selector(f"{EXPLORER} .js-plotly-plot .heatmaplayer, {EXPLORER} .js-plotly-plot .hm", timeout=60_000)
    lab.screenshot("explorer.png")


def test_compare_shows_one_pass_of_two_architectures_side_by_side(lab):
    sm80 = GEMM_CELL.replace("--arch sm_90", "--arch sm_80 --no-show")
    cells = [
        "%load_ext tilelab",
        sm80,
        "sm80 = matmul_record",
        GEMM_CELL.replace("sm_90", "sm_90 --no-show"),
        "import tilelab\ntilelab.compare(sm80, matmul_record)",
    ]
    lab.write_notebook("compare.ipynb", cells)
    lab.open_notebook("compare.ipynb")

    lab.run_all()
    page = lab.page
    compare = page.wait_for_selector(".jp-OutputArea-output .tl-compare")
    assert "only in" in compare.inner_text()
    page.locator(".tl-compare .tl-compare-row:has(.tl-name:has-text('tl.LayoutInference'))").first.click()
    page.wait_for_selector(
        ".tl-compare .tl-detail .tl-diff-split, .tl-compare .tl-detail .tl-hint:has-text('Identical')"
    )
    lab.screenshot("compare.png")
