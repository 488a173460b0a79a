"""The tuning view in a real JupyterLab, light and dark: the latency heat map and the rows stay readable; a running sweep
is redrawn; a search's charts are drawn live, a hostile parameter name as text."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_search_analysis import searched as searched_run

from tilelab.tune.search_analysis import best_so_far
from ui.explorer_page import at_1280_with_sidebars, dark_theme, run_in_kernel

pytestmark = pytest.mark.ui

TUNING_CELL = """%load_ext tilelab
from dataclasses import replace
from tilelab.tune.noise import Verdict
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus

configs = tuple({"block_M": m, "block_N": n} for m in (64, 128, 256) for n in (64, 128, 256))
run = TuneResult(kernel_name="matmul", configs=configs, swept=("block_M", "block_N"), device="NVIDIA H200",
                 compiled=9, benchmarked=9)
for index, config in enumerate(configs):
    if config == {"block_M": 256, "block_N": 256}:
        run.add(TuneRow(index, config, TuneStatus.COMPILE_ERROR, error="ptxas: too much shared memory"))
    else:
        run.add(TuneRow(index, config, TuneStatus.OK, latency_ms=0.2 + 0.013 * (index * 5 % 9), compile_s=2.5))
# The re-benchmark at the end chose block_N=256 (0.213 in the sweep) over the sweep's minimum (0.200).
run.add(replace(run.rows[0], rebench_ms=0.205))
run.add(replace(run.rows[2], rebench_ms=0.201))
run.verdict = Verdict(best=2, runner_up=0, margin_pct=2.0, noise_pct=0.6, tied=())
run
"""
RUNNING_CELL = """%load_ext tilelab
from tilelab.registry import default_registry
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus

configs = tuple({"block_M": m, "block_N": n} for m in (64, 128) for n in (64, 128))
live = TuneResult(kernel_name="matmul", configs=configs, swept=("block_M", "block_N"), device="NVIDIA H200", running=True)
live.add(TuneRow(0, configs[0], TuneStatus.OK, latency_ms=0.3))
live.compiled = live.benchmarked = 1
live
"""
# What the sweep does as its last rows arrive: the view hears it from the registry and the widget asks again.
FINISH = """
for index, config in enumerate(configs[1:], start=1):
    live.add(TuneRow(index, config, TuneStatus.OK, latency_ms=0.3 - 0.05 * index))
live.compiled = live.benchmarked = 4
live.running = False
default_registry().track_tuning(live)
"""
TESTS = Path(__file__).parents[1]
EVIL = "<img src=x onerror=\"document.title='pwned'\">"
SEARCH_CELL = f"""%load_ext tilelab
import sys
sys.path.insert(0, {str(TESTS)!r})
from test_search_analysis import SETTINGS, _result, _row, searched

display(searched())  # a seeded TPE search of 20 trials over a GEMM model
evil = {EVIL!r}
hostile = _result([_row(i, 1.0 + i, elapsed=float(i), **{{evil: i, "block_N": i % 2}}) for i in range(4)], swept=(evil, "block_N"))
hostile.search, hostile.kernel_name = SETTINGS, evil
hostile.running = True  # still searching: its importance is that of the rows so far
hostile
"""
VIEW = ".jp-OutputArea-output[data-shown='live'] .tilelab-tuning"  # the live widget (src/widgets/tuning.ts), not the snapshot


def test_the_tuning_view_reads_in_light_and_dark_themes(lab):
    lab.run_notebook("tuning.ipynb", [TUNING_CELL])
    page = lab.page

    view = page.wait_for_selector(VIEW)
    assert "9/9 configs, done" in view.inner_text()
    pivot = view.wait_for_selector("table[data-tilelab='tuning-pivot']")
    assert pivot.query_selector("td[data-best='true']").inner_text() == "0.200"  # decimals as its 0.265 needs
    assert [td.inner_text() for td in pivot.query_selector_all("td") if "★" in td.inner_text()] == ["0.213 ★"]
    assert "★ the best config, chosen by the re-benchmark at the end" in view.inner_text()
    header = view.query_selector("table[data-tilelab='tuning-rows'] thead").inner_text()
    assert "latency_ms" in header and "rebench_ms" in header and "tflops" not in header  # columns nobody filled: hidden
    at_1280_with_sidebars(page)  # a laptop's screen
    view.scroll_into_view_if_needed()
    lab.screenshot("tuning-light.png")

    with dark_theme(page):
        lab.screenshot("tuning-dark.png")

    latencies = "node => [...node.querySelectorAll('tbody tr')].map(tr => tr.cells[4].textContent)"
    view.query_selector("th button:text-is('latency_ms')").click()  # the kernel sends every row in that order
    view.wait_for_selector("th[aria-sort='ascending'] button:text-is('latency_ms ▲')")
    sorted_up = view.query_selector("table[data-tilelab='tuning-rows']").evaluate(latencies)
    assert sorted_up[:3] == ["0.200", "0.213", "0.226"]
    view.query_selector("th button:text-is('latency_ms ▲')").click()  # again: the other way
    view.wait_for_selector("th[aria-sort='descending'] button:text-is('latency_ms ▼')")
    sorted_down = view.query_selector("table[data-tilelab='tuning-rows']").evaluate(latencies)
    assert sorted_down[:2] == ["0.304", "0.291"] and sorted_down[-1] == ""  # the failed config last, either way
    lab.screenshot("tuning-sorted.png")
    sort_button = "th[aria-sort='{}'] button[data-focus='sort latency_ms']"
    view.query_selector(sort_button.format("descending")).focus()
    for order in ("ascending", "descending"):  # by the keyboard: the redrawn column name keeps the focus
        page.keyboard.press("Enter")
        view.wait_for_selector(sort_button.format(order))
        assert page.evaluate("() => document.activeElement.dataset.focus") == "sort latency_ms"
    assert page.locator(".jp-Notebook.jp-mod-editMode").count() == 0
    lab.screenshot("tuning-sort-focus.png")

    # Typing a filter: the kernel keeps the rows it matches, in the order clicked; JupyterLab's command-mode keys
    # (an "a" adds a cell) stay out of it, and the redraws leave the focus where the user types.
    rows = "table[data-tilelab='tuning-rows']"
    filter_box = view.query_selector("input[aria-label='filter the rows']")
    assert filter_box.get_attribute("placeholder") == "filter: block_M=64|128 latency_ms<0.27"  # this sweep's own
    filter_box.click()
    page.keyboard.type("status!=ok")  # key by key, as a user types
    view.wait_for_selector("div:text-is('1 of 9 rows matches')")
    assert view.query_selector(rows).evaluate(latencies) == [""]
    assert view.query_selector(f"{rows} tbody td:text-is('compile_error')")
    assert page.evaluate("() => document.activeElement.getAttribute('aria-label')") == "filter the rows"
    assert page.locator(".jp-Notebook .jp-Cell").count() == 1
    assert "no row that matches the filter has one" in view.inner_text()  # the heat map: no latency to show
    filter_box.fill("block_M=64|256 latency_ms<0.25")
    view.wait_for_selector("div:text-is('3 of 9 rows match')")
    assert view.query_selector(rows).evaluate(latencies) == ["0.239", "0.213", "0.200"]  # still slowest first
    heat = "node => [...node.querySelectorAll('td')].map(td => td.textContent.trim()).filter(t => t && t !== '—')"  # — : no value
    assert sorted(view.query_selector("table[data-tilelab='tuning-pivot']").evaluate(heat)) == ["0.200", "0.213 ★", "0.239"]
    lab.screenshot("tuning-filtered.png")

    # A heat map's cell filters the rows to its configs: the empty cell's failed config by a click, another by Enter.
    cell = "table[data-tilelab='tuning-pivot'] td[title='show the rows of {}']"
    view.query_selector(cell.format("block_M=256 block_N=256")).click()
    view.wait_for_selector("div:text-is('1 of 9 rows matches')")
    assert filter_box.input_value() == "block_M=256 block_N=256"
    assert view.query_selector(f"{rows} tbody td:text-is('compile_error')")
    view.query_selector(cell.format("block_M=64 block_N=128")).focus()
    page.keyboard.press("Enter")
    view.wait_for_selector("div:text-is('1 of 9 rows matches') >> xpath=following::td[text()='0.265']")
    assert filter_box.input_value() == "block_M=64 block_N=128"
    lab.screenshot("tuning-cell-filter.png")
    view.wait_for_selector("table[data-tilelab='tuning-pivot'] td[title='show every row again']").click()
    view.wait_for_selector(f"{rows} tbody tr:nth-child(9)")  # the same cell again: every row
    assert filter_box.input_value() == "" and "rows match" not in view.inner_text()
    assert page.locator(".jp-Notebook.jp-mod-editMode").count() == 0  # JupyterLab did not take the Enter
    filter_box.fill("blok_M=64")
    problem = view.wait_for_selector("[data-tilelab='tuning-filter-error']:has-text(\"no column 'blok_M'\")")
    assert "(the columns: best, block_M, block_N, status" in problem.inner_text()
    assert len(view.query_selector(rows).evaluate(latencies)) == 9  # a filter it cannot read keeps every row
    with dark_theme(page):
        lab.screenshot("tuning-filter-error-dark.png")


def test_a_running_sweep_is_redrawn_as_the_registry_announces_its_rows(lab):
    lab.run_notebook("running.ipynb", [RUNNING_CELL])
    page = lab.page
    view = page.wait_for_selector(f"{VIEW}[data-revision='0']")
    assert "1/4 configs, running…" in view.inner_text()
    view.query_selector("td[title='show the rows of block_M=64 block_N=64']").focus()  # a keyboard user on the map

    run_in_kernel(page, FINISH)

    view.wait_for_selector("[data-tilelab='tuning-state']:text-is('done')")
    assert page.evaluate("() => document.activeElement.title") == "show the rows of block_M=64 block_N=64"  # redrawn
    assert "4/4 configs" in view.inner_text() and view.get_attribute("data-revision") != "0"
    assert view.query_selector("td[data-best='true']").inner_text() == "0.15"
    assert len(view.query_selector_all("table[data-tilelab='tuning-rows'] tbody tr")) == 4
    at_1280_with_sidebars(page)
    view.scroll_into_view_if_needed()
    lab.screenshot("tuning-running-done.png")


def test_a_searchs_charts_are_drawn_live_and_a_hostile_parameter_name_stays_text(lab):
    lab.run_notebook("search.ipynb", [SEARCH_CELL])
    page = lab.page

    views = page.locator(VIEW)
    searched, hostile = views.nth(0), views.nth(1)
    for view in (searched, hostile):
        view.locator("svg[data-tilelab='search-chart']").nth(2).wait_for()  # each view draws its three charts
    charts = searched.locator("svg[data-tilelab='search-chart']")
    assert charts.count() == 3
    assert [charts.nth(i).get_attribute("aria-label") for i in range(3)] == [
        "best so far vs benchmarks", "best so far vs wall time (s)", "parameter importance (main effects)"]  # fmt: skip
    assert charts.nth(0).locator("circle").count() == len(best_so_far(searched_run()))  # one dot per benchmark
    assert charts.nth(0).locator("path").count() == 1 and charts.nth(2).locator("rect").count() == 4
    assert "configs measured of 64 in the space" in searched.locator(".tl-tuning-search").inner_text()

    importance = hostile.locator("svg[data-tilelab='search-chart']").nth(2)
    assert importance.get_attribute("aria-label") == "parameter importance (main effects so far)"
    bars = importance.locator("rect title")
    assert any(title.startswith(f"{EVIL}: ") for title in bars.all_text_contents())
    assert hostile.locator("img").count() == 0 and page.title() != "pwned"

    at_1280_with_sidebars(page)
    searched.locator(".tl-tuning-search").scroll_into_view_if_needed()
    lab.screenshot("tuning-search-light.png")
    with dark_theme(page):
        lab.screenshot("tuning-search-dark.png")
        importance.scroll_into_view_if_needed()
        lab.screenshot("tuning-search-running-dark.png")
