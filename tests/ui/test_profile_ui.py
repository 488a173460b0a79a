"""The Profile tab in a real JupyterLab: ncu reports (tests/data) of the quickstart GEMM, light and dark.

Profiling needs a GPU; the reports here were captured on an H100 (details) and on
an H200 (details and the warp samples of each SASS instruction), summarised
against the GEMM's own static estimate, and put on the record as
``%%tilelang --profile`` does. The H200 one goes on the saved record of the
GEMM, whose SASS is the one ncu sampled, so its samples land on lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ui.explorer_page import (
    EXPLORER,
    at_1280_with_sidebars,
    dark_theme,
    notebook_page,
    run_in_kernel,
    screenshot,
    show_tab,
)

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
SAMPLED_CELL = f"""import gzip
from tilelab.counters.source_page import parse_ncu_source_csv
from tilelab.records import KernelRecord

saved = KernelRecord.from_json(gzip.open({str(DATA / "quickstart_gemm.record.json.gz")!r}, "rt").read())
frame = parse_ncu_csv(open({str(DATA / "ncu_gemm_h200_details.csv")!r}).read())
frame.attrs["samples"] = parse_ncu_source_csv(gzip.open({str(DATA / "ncu_gemm_h200_source.csv.gz")!r}, "rt").read())
saved.with_profile(summarize(frame, saved.estimate, "sm_90", "NVIDIA H200"))
"""
# The same record shown before its machine code is built, as %%tilelang shows it while nvcc runs in the background.
LATE_CELL = """import uuid
from dataclasses import replace
from tilelab.registry import default_registry

profile = summarize(frame, saved.estimate, "sm_90", "NVIDIA H200")
late = replace(saved.with_profile(profile), machine_code=None, id=uuid.uuid4().hex[:12])  # another run: its own view
default_registry().add(late)
"""
# What the magic does when the build is done: the registry's record is replaced, and the Explorer hears it.
ARRIVES = "built = default_registry().update(late.with_machine_code(saved.machine_code))"  # shown nowhere


def profile_tab(lab, nth: int):
    """The ``nth`` Explorer of the notebook, showing its Profile tab."""
    explorer = lab.page.locator(EXPLORER).nth(nth)
    show_tab(explorer, "Profile")
    return explorer


def light_and_dark(page, name: str) -> None:
    screenshot(page, f"{name}.png")
    with dark_theme(page):
        screenshot(page, f"{name}-dark.png")


@pytest.fixture(scope="module")
def lab(lab_server, browser):
    with notebook_page(lab_server, browser, "profile.ipynb", [PROFILED_CELL, SAMPLED_CELL, LATE_CELL + "late"]) as lab:
        at_1280_with_sidebars(lab.page)
        yield lab


def test_the_profile_tab_shows_speed_of_light_the_roofline_point_and_advice(lab):
    page, explorer = lab.page, profile_tab(lab, 0)
    roofline = explorer.locator("[data-tilelab='roofline']")
    roofline.wait_for()

    text = explorer.locator(".tl-tabbody").inner_text()
    assert "Speed of Light" in text and "achieved FLOP/s" in text and "% of peak" in text and "H100 SXM" in text
    assert explorer.locator("svg circle").count() == 1  # the kernel's point on the roofline
    explorer.locator("[data-tilelab='roofline']").scroll_into_view_if_needed()
    light_and_dark(page, "profile-h100-gemm")


def test_the_profile_tab_says_where_the_warps_were_by_cell_line_and_by_cuda_line(lab):
    page, explorer = lab.page, profile_tab(lab, 1)
    by_cell = explorer.locator("[data-tilelab='samples-by-cell-line']")
    by_cell.wait_for()

    assert "T.gemm(A_shared, B_shared, C_local)" in by_cell.inner_text() and "barrier 81 %" in by_cell.inner_text()
    summary = explorer.locator("[data-tilelab='samples-summary']").inner_text()
    assert summary.startswith("Cell line 13 has 29 % of the samples")
    explorer.locator(".tl-samples-fold > summary").click()
    by_cuda = explorer.locator("[data-tilelab='samples-by-cuda-line']")
    by_cuda.wait_for()
    assert by_cuda.locator("tbody tr").count() == 12 and "tl::warpgroup_wait<0>();" in by_cuda.inner_text()
    assert by_cuda.locator("span[title*='barrier (bar.sync']").count() >= 1  # each reason says what it means
    # warp-specialised: whose warps the samples were at (the pipeline line: the producer and the consumer waiting, and
    # all warps at its barrier set-up before the split)
    assert by_cell.locator("th").all_inner_texts()[-1] == "warps"
    pipeline = by_cell.locator("tbody tr", has_text="T.Pipelined")
    assert pipeline.locator(".tl-samples-warp").all_inner_texts() == ["producer 53 %", "consumer 46 %", "all 1 %"]
    assert by_cuda.locator("tbody tr").first.locator(".tl-samples-warp").all_inner_texts() == ["consumer"]
    # 1280 wide with both sidebars, the code column is narrow: a line wraps as its stall reasons do, and only a
    # longer one than three lines hold is cut with "…"
    clipped = "node => node.scrollHeight > node.clientHeight"
    assert by_cell.locator("tbody tr", has_text="T.gemm").locator(".tl-samples-clip").evaluate(clipped) is False
    assert by_cell.locator("tbody tr", has_text="T.Pipelined").locator(".tl-samples-clip").evaluate(clipped) is True
    explorer.locator("[data-tilelab='samples-summary']").evaluate("node => node.scrollIntoView({block: 'start'})")
    light_and_dark(page, "profile-h200-warp-samples")


def test_machine_code_that_arrives_later_places_the_samples_and_fills_the_overview_without_a_rerun(lab):
    page, explorer = lab.page, profile_tab(lab, 2)
    note = explorer.locator("[data-tilelab='samples-note']")
    assert note.inner_text().startswith("the record has no machine code yet (%%tilelang builds it in the background")
    show_tab(explorer, "Overview")
    assert "registers/thread" not in explorer.locator(".tl-tabpanel:visible").inner_text()

    run_in_kernel(page, ARRIVES)

    explorer.locator(".tl-tabpanel[data-tab='overview']", has_text="registers/thread").wait_for()
    show_tab(explorer, "Profile")
    explorer.locator("[data-tilelab='samples-by-cell-line']").wait_for()
    assert note.count() == 0
