"""The Explorer's shell in a real JupyterLab: tabs, the Overview, the Layouts under the tab bar; and tilelab.compare."""

from __future__ import annotations

import pytest
from cells import gemm_cell

from ui.explorer_page import EXPLORER, at_1280_with_sidebars, dark_theme, open_notebook_with, screenshot, show_tab

pytestmark = pytest.mark.ui

GEMM_CELL = gemm_cell(magic="--arch sm_90")
SELECTED_IN_SIGHT = """compare => {
  const row = compare.querySelector('.tl-compare-row.tl-selected'), list = row.closest('[role=listbox]');
  const [r, l] = [row.getBoundingClientRect(), list.getBoundingClientRect()];
  return compare.classList.contains('tl-narrow') && r.top >= l.top && r.bottom <= l.bottom;
}"""


def test_the_explorer_shows_its_tabs_the_overview_and_the_layouts_under_the_tab_bar(lab):
    open_notebook_with(lab, "explorer.ipynb", ["%load_ext tilelab", GEMM_CELL])
    page = lab.page
    explorer = page.locator(EXPLORER).first

    assert explorer.locator(".tl-tab").all_inner_texts() == ["Overview", "Passes", "Source", "Layouts", "Machine code"]
    assert len({round(tab.bounding_box()["y"]) for tab in explorer.locator(".tl-tab").all()}) == 1  # one row
    explorer.locator(".tl-html [data-tilelab='overview']").wait_for()
    assert "lowered only" in explorer.locator(".tl-html").inner_text()
    screenshot(page, "explorer-overview.png")

    show_tab(explorer, "Layouts")
    layouts = explorer.locator(".tl-lay, .tl-layouts").first
    layouts.wait_for()
    assert explorer.locator(".tl-tabbody > .tl-lay").is_visible()  # a tab of the Explorer, not a widget beside it
    assert layouts.bounding_box()["y"] > explorer.locator(".tl-tabbar").bounding_box()["y"]

    show_tab(explorer, "Passes")
    explorer.locator(".tl-passes[data-shown-pass]").wait_for()
    assert layouts.is_hidden()
    explorer.locator(".tl-tab.tl-on").press("ArrowRight")
    explorer.locator(".tl-tab.tl-on:text-is('Source')").wait_for()


def test_compare_diffs_one_pass_of_two_architectures(lab):
    cells = [
        "%load_ext tilelab",
        GEMM_CELL.replace("--arch sm_90", "--arch sm_80 --no-show"),
        "sm80 = matmul_record",
        GEMM_CELL.replace("sm_90", "sm_90 --no-show"),
        "import tilelab\ntilelab.compare(sm80, matmul_record)",
    ]
    lab.run_notebook("compare.ipynb", cells)
    page = lab.page
    compare = page.locator(".jp-OutputArea-output .tl-compare").first
    compare.wait_for()
    assert "only in" in compare.inner_text()

    compare.locator(".tl-compare-row:has(.tl-name:has-text('tl.LayoutInference'))").first.click()
    compare.locator(".tl-diff, .tl-hint:has-text('Identical')").first.wait_for()  # side by side, or unified where narrow
    compare.evaluate("node => node.scrollIntoView({block: 'start'})")
    screenshot(page, "compare.png")
    assert compare.get_attribute("data-shown-row") is not None

    # Narrower (1280 with both sidebars), the list stacks above the diff in a shorter box: the selected pass stays
    # in sight, and the diff, unified for want of room, says so without a width that a resize would leave stale.
    at_1280_with_sidebars(page)
    page.wait_for_function(SELECTED_IN_SIGHT, arg=compare.element_handle())
    assert compare.locator(".tl-compare-row.tl-selected").inner_text().startswith("≠\n#20 tl.LayoutInference")
    facts = compare.locator(".tl-detail .tl-facts").inner_text()
    assert facts.endswith("shown unified: side by side needs 824 px") and "this view has" not in facts
    compare.evaluate("node => node.scrollIntoView({block: 'start'})")
    screenshot(page, "compare-1280.png")
    with dark_theme(page):
        screenshot(page, "compare-1280-dark.png")
