"""The tuning view's timeline in a real JupyterLab, light and dark: its bars and labels read, ties are marked."""

from __future__ import annotations

import pytest

from ui.explorer_page import at_1280_with_sidebars, dark_theme

pytestmark = pytest.mark.ui

TIMELINE_CELL = """%load_ext tilelab
from tilelab.tune.noise import Verdict
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.tune.timeline import Span, Timeline

configs = tuple({"block_M": m, "block_N": n, "num_stages": 3} for m in (64, 128, 256) for n in (64, 128))
run = TuneResult(kernel_name="matmul", configs=configs, swept=("block_M", "block_N", "num_stages"), device="NVIDIA H100",
                 compiled=6, benchmarked=5)
timeline = run.timeline_record = Timeline(origin=0.0, workers=4, cold_workers=4, cold_start_s=2.1)
spans, bench = [], 4.6
for index, config in enumerate(configs):
    start = 0.3 + (index // 4) * 4.3
    spans += [Span(index, "queued", 0.2, start), Span(index, "compiling", start, start + 4.0 + 0.1 * index, f"worker {index % 4 + 1}")]
    if index == 5:
        run.add(TuneRow(index, config, TuneStatus.COMPILE_ERROR, error="ptxas: too much shared memory"))
        continue
    done = start + 4.0 + 0.1 * index
    spans += [Span(index, "waiting", done, max(done, bench)), Span(index, "checking", max(done, bench), max(done, bench) + 0.05, "bench"),
              Span(index, "benchmarking", max(done, bench) + 0.05, max(done, bench) + 0.2, "bench")]
    bench = max(done, bench) + 0.2
    run.add(TuneRow(index, config, TuneStatus.OK, latency_ms=0.2 + 0.013 * (index * 5 % 7), compile_s=4.0, timing="cuda events"))
spans += [Span(i, "rebenchmarking", 9.6, 10.1, "bench") for i in (0, 3, 4)]
timeline.spans = spans
run.verdict = Verdict(best=0, runner_up=3, margin_pct=0.4, noise_pct=0.7, tied=(3,))
run
"""
VIEW = ".jp-OutputArea-output[data-shown='live'] .tilelab-tuning"  # the live widget (src/widgets/tuning.ts), not the snapshot
# Each row label's text, how far its left edge lies right of the chart's, and its tooltip.
LABEL_OFFSETS = """(svg) => [...svg.querySelectorAll('text.tl-tuning-config')]
  .map(text => [text.textContent, text.getBoundingClientRect().left - svg.getBoundingClientRect().left,
                text.parentNode.querySelector(':scope > title')?.textContent])"""


def test_the_timeline_reads_in_light_and_dark_themes(lab):
    lab.run_notebook("timeline.ipynb", [TIMELINE_CELL])
    page = lab.page

    view = page.wait_for_selector(VIEW)
    chart = view.wait_for_selector("svg[data-tilelab='tuning-timeline']")
    assert len(chart.query_selector_all("rect")) > 20
    assert "top 2 indistinguishable" in view.query_selector("[data-tilelab='tuning-verdict']").inner_text()
    assert "critical path" in view.query_selector("[data-tilelab='timeline-summary']").inner_text()
    labels = chart.evaluate(LABEL_OFFSETS)  # "block_M=64, block_N=64, num_stages=3", cut to fit in the label column
    assert len(labels) == 6 and all(text.endswith("…") and left >= 0 for text, left, _ in labels), labels
    assert labels[0][2] == "block_M=64, block_N=64, num_stages=3"  # a cut label's tooltip has it whole
    at_1280_with_sidebars(page)  # a laptop's screen
    chart.scroll_into_view_if_needed()
    lab.screenshot("tuning-timeline-light.png")

    with dark_theme(page):
        lab.screenshot("tuning-timeline-dark.png")
