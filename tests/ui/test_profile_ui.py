"""The Profile tab in a real JupyterLab: an H100 ncu report (tests/data) of the quickstart GEMM, light and dark.

Profiling needs a GPU; the report here is one captured on an H100, summarised
against the GEMM's own static estimate, and put on the record as
``%%tilelang --profile`` does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ui.explorer_page import EXPLORER, at_1280_with_sidebars, dark_theme, notebook_page, screenshot, show_tab

pytestmark = pytest.mark.ui

DATA = Path(__file__).resolve().parent.parent / "data"
PROFILED_CELL = f"""%load_ext tilelab
import sys
sys.path.insert(0, {str(DATA.parent)!r})
import tilelab
from kernels import matmul
from tilelab.counters.ncu import parse_ncu_csv
from tilelab.counters.summary import summarize

record = tilelab.explore(matmul, arch="sm_90", machine_code=False)
frame = parse_ncu_csv(open({str(DATA / "ncu_gemm_h100_details.csv")!r}).read())
record.with_profile(summarize(frame, record.estimate, "sm_90", "NVIDIA H100 80GB HBM3"))
"""


@pytest.fixture(scope="module")
def lab(lab_server, browser):
    with notebook_page(lab_server, browser, "profile.ipynb", [PROFILED_CELL]) as lab:
        at_1280_with_sidebars(lab.page)
        yield lab


def test_the_profile_tab_shows_speed_of_light_the_roofline_point_and_advice(lab):
    page = lab.page
    explorer = page.locator(EXPLORER).first
    show_tab(explorer, "Profile")
    roofline = explorer.locator("[data-tilelab='roofline']")
    roofline.wait_for()

    text = explorer.locator(".tl-tabbody").inner_text()
    assert "Speed of Light" in text and "achieved FLOP/s" in text and "% of peak" in text and "H100 SXM" in text
    assert explorer.locator("svg circle").count() == 1  # the kernel's point on the roofline
    explorer.locator("[data-tilelab='roofline']").scroll_into_view_if_needed()
    screenshot(page, "profile-h100-gemm.png")
    with dark_theme(page):
        screenshot(page, "profile-h100-gemm-dark.png")
