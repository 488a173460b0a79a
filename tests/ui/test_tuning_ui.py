"""The tuning view in a real JupyterLab, light and dark: the latency heat map and the rows stay readable."""

from __future__ import annotations

import pytest

from ui.explorer_page import dark_theme

pytestmark = pytest.mark.ui

TUNING_CELL = """%load_ext tilelab
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus

configs = tuple({"block_M": m, "block_N": n} for m in (64, 128, 256) for n in (64, 128, 256))
run = TuneResult(kernel_name="matmul", configs=configs, swept=("block_M", "block_N"), device="NVIDIA H200",
                 compiled=9, benchmarked=9)
for index, config in enumerate(configs):
    if config == {"block_M": 256, "block_N": 256}:
        run.add(TuneRow(index, config, TuneStatus.COMPILE_ERROR, error="ptxas: too much shared memory"))
    else:
        run.add(TuneRow(index, config, TuneStatus.OK, latency_ms=0.2 + 0.013 * (index * 5 % 9), compile_s=2.5))
run
"""
VIEW = ".jp-OutputArea-output .tilelab-tuning"


def test_the_tuning_view_reads_in_light_and_dark_themes(lab):
    lab.write_notebook("tuning.ipynb", [TUNING_CELL])
    lab.open_notebook("tuning.ipynb")
    lab.run_all()
    page = lab.page

    view = page.wait_for_selector(VIEW)
    assert "9/9 configs, done" in view.inner_text()
    best = view.wait_for_selector("table[data-tilelab='tuning-pivot'] td[data-best='true']")
    assert best.inner_text() == "0.2"
    header = view.query_selector("table[data-tilelab='tuning-rows'] thead").inner_text()
    assert "latency_ms" in header and "tflops" not in header and "rebench_ms" not in header
    view.scroll_into_view_if_needed()
    lab.screenshot("tuning-light.png")

    with dark_theme(page):
        lab.screenshot("tuning-dark.png")
