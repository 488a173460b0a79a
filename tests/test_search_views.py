"""The search charts: best-so-far curves and parameter importance drawn from the tuning data (results built by hand, no compiles)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from htmlcheck import chart_documents, parse
from test_search_analysis import SPACE, _result, _row, searched

from tilelab.tune.result import TuneStatus
from tilelab.tune.search_analysis import best_so_far, parameter_importance
from tilelab.views.tuning import TuningView, search_html
from tilelab.views.tuning.data import analysis_data, best_so_far_curve, search_data
from tilelab.views.tuning.snapshot_search import best_so_far_svg, importance_svg

EVIL = "<img src=x onerror=alert(1)>&\"'"
SVG = "{http://www.w3.org/2000/svg}"


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
