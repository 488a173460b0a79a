"""The search charts: best-so-far curves and parameter importance, laid out in the tuning data and drawn from it by
the snapshot and the live widget alike (results built by hand, no compiles)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from htmlcheck import chart_documents, parse
from tabdata import as_sent
from test_search_analysis import SPACE, _result, _row, searched

from tilelab.tune.result import TuneStatus
from tilelab.tune.search_analysis import MAIN_EFFECTS_SO_FAR, best_so_far, parameter_importance
from tilelab.views.html import sanitiser_proof
from tilelab.views.tuning import TuningView, search_html
from tilelab.views.tuning.data import analysis_data, best_so_far_curve, search_data
from tilelab.views.tuning.data_search import best_so_far_chart, importance_chart
from tilelab.views.tuning.snapshot import tuning_html
from tilelab.views.tuning.snapshot_search import chart_svg

EVIL = "<img src=x onerror=alert(1)>&\"'"
SVG = "{http://www.w3.org/2000/svg}"


def best_so_far_svg(curve: dict, reference: float | None = None) -> str:
    return chart_svg(best_so_far_chart(curve, reference))[0]


def importance_svg(importance: dict) -> str:
    return chart_svg(importance_chart(importance))[0]


def test_the_curves_are_the_benchmarks_and_the_steps_where_the_best_improved():
    result = searched()

    curve = best_so_far_curve(result, "benchmarks")

    frame = best_so_far(result)
    assert [point[1] for point in curve["points"]] == list(frame["latency_ms"])
    assert [y for _, y in curve["steps"]] == sorted({y for _, y in curve["steps"]}, reverse=True)
    assert best_so_far_curve(result, "wall")["label"] == "wall time (s)"


def test_best_so_far_svg_is_a_step_line_over_dots_with_no_script():
    result = searched()

    for axis in ("benchmarks", "wall"):
        svg = best_so_far_svg(best_so_far_curve(result, axis), reference=0.26)
        tree = ET.fromstring(svg)
        assert len(tree.findall(f"{SVG}circle")) == len(best_so_far(result))
        assert "<script" not in svg and "var(--jp-brand-color1" in svg
        assert tree.find(f"{SVG}path") is not None


def test_wall_time_axis_needs_a_known_axis_name():
    with pytest.raises(ValueError, match="x='time'"):
        best_so_far_curve(searched(), "time")


def test_importance_bars_are_the_analysis_shares():
    result = searched()

    importance = analysis_data(result)["importance"]

    found, method = parameter_importance(result)
    assert importance == {"shares": [[name, share] for name, share in found.items()], "method": method}
    assert len(ET.fromstring(importance_svg(importance)).findall(f"{SVG}rect")) == len(SPACE)


def test_too_few_timed_configs_say_so_instead_of_drawing_bars():
    result = _result([_row(0, 1.0, block_M=1, block_N=1)])

    assert "needs at least 3 timed configs" in importance_svg(analysis_data(result)["importance"])
    failed = _result([_row(0, None, TuneStatus.COMPILE_ERROR, block_M=1, block_N=1)])
    assert "no benchmarks yet" in best_so_far_svg(best_so_far_curve(failed))


def test_a_search_shows_its_charts_in_the_tuning_snapshot_and_a_grid_does_not():
    result = searched()
    grid = _result([_row(i, 1.0 + i, block_M=i, block_N=i) for i in range(4)])

    assert search_data(grid) is None and "tilelab-search" not in TuningView(grid).to_html()
    assert search_html(result) in TuningView(result).to_html()


def test_every_dot_the_reference_line_and_every_bar_has_a_hover_box_over_its_image():
    result = searched()
    data = analysis_data(result, reference=0.26)

    boxes = parse(search_html(result, reference=0.26)).find_all("div", **{"class": "tl-chart-box"})

    tips = [[tip.attrs["title"] for tip in box.find_all("div", **{"class": "tl-chart-tip"})] for box in boxes]
    for curve, titles in zip(data["curves"], tips[:-1], strict=True):
        assert titles == ["reference 0.26 ms"] + [f"{status}: {y:.3g} ms" for _, y, status in curve["points"]]
    assert tips[-1] == [f"{name}: {share:.3f}" for name, share in sorted(data["importance"]["shares"], key=lambda p: -p[1])]
    assert len(boxes) == len(data["curves"]) + 1 and all(len(box.find_all("img")) == 1 for box in boxes)


def test_a_long_parameter_name_is_cut_to_fit_left_of_its_bar_and_its_tooltip_keeps_it_whole():
    name = "enable_rasterization_with_swizzle"
    rows = [_row(i, 1.0 + i, elapsed=float(i), **{name: i, "block_N": i % 2}) for i in range(4)]
    result = _result(rows, swept=(name, "block_N"))

    page = search_html(result)

    (svg,) = [svg for svg in chart_documents(parse(page)) if "parameter importance" in svg]
    labels = [text.text for text in ET.fromstring(svg).findall(f"{SVG}text") if text.get("text-anchor") == "end"]
    assert sorted(labels) == ["block_N", "enable_rasteri…"]
    assert any(tip.attrs["title"].startswith(f"{name}: ") for tip in parse(page).find_all("div", **{"class": "tl-chart-tip"}))


def test_user_strings_are_escaped_in_every_chart():
    rows = [_row(i, 1.0 + i, elapsed=float(i), **{EVIL: i, "block_N": i % 2}) for i in range(4)]
    result = _result(rows, swept=(EVIL, "block_N"))
    result.kernel_name = EVIL

    page = search_html(result)

    assert "<img src=x" not in page and "onerror=alert(1)>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert any(tip.attrs["title"].startswith(f"{EVIL}: ") for tip in parse(page).find_all("div", **{"class": "tl-chart-tip"}))
    documents = chart_documents(parse(page))
    assert len(documents) == 3  # best so far on each swept axis, and the parameters' importance
    for svg in documents:
        ET.fromstring(svg)  # well-formed: nothing broke out of an attribute or a text node
        assert "onerror=alert(1)>" not in svg


def _asked(view: TuningView) -> dict:
    """What the live widget's front-end gets when it asks for the data (a ``tuning`` request), as it arrives."""
    reply = as_sent(view.widget.answer({"id": 1, "type": "tuning"}))
    return {name: value for name, value in reply.items() if name not in ("id", "type")}


def test_the_live_widget_receives_the_search_charts_the_snapshot_draws():
    view = TuningView(searched())

    sent = _asked(view)

    assert sent == as_sent(view.data())
    assert sanitiser_proof(tuning_html(sent)) == view.to_html()
    titles = [chart["title"] for chart in sent["search"]["charts"]]
    assert titles == ["best so far vs benchmarks", "best so far vs wall time (s)", "parameter importance (main effects)"]
    dots = [mark for mark in sent["search"]["charts"][0]["marks"] if mark["mark"] == "dot"]
    assert len(dots) == len(best_so_far(searched())) and all(dot["tip"].endswith(" ms") for dot in dots)


def test_the_data_decides_every_mark_and_colour_of_the_search_charts():
    (chart,) = [chart for chart in analysis_data(searched())["charts"] if chart["title"].startswith("parameter")]

    bars = [mark for mark in chart["marks"] if mark["mark"] == "rect"]

    assert [bar["tip"].split(":")[0] for bar in bars] == [name for name, _ in sorted(
        analysis_data(searched())["importance"]["shares"], key=lambda pair: -pair[1])]  # fmt: skip
    assert {bar["colour"] for bar in bars} == {"var(--jp-brand-color2, #54aeff)"}
    assert all(bar["box"][0] == 0 and bar["box"][2] > bar["width"] for bar in bars)  # the hover box covers the label too
    assert all(mark["colour"].startswith("var(--jp-") for mark in chart["marks"])


def test_while_a_search_runs_its_curves_grow_and_its_importance_is_drawn_from_the_rows_so_far():
    result = searched()
    result.running = True
    view = TuningView(result)

    running = _asked(view)["search"]

    importance = running["charts"][-1]
    assert running["importance"]["method"] == MAIN_EFFECTS_SO_FAR
    assert importance["title"] == "parameter importance (main effects so far)"
    assert len([mark for mark in importance["marks"] if mark["mark"] == "rect"]) == len(SPACE)
    assert [mark for mark in running["charts"][0]["marks"] if mark["mark"] == "dot"]

    result.running = False
    done = _asked(view)["search"]
    assert done["importance"]["method"] in ("fANOVA", "main effects")
    assert len([mark for mark in done["charts"][-1]["marks"] if mark["mark"] == "rect"]) == len(SPACE)
