"""The search views: best-so-far curves and parameter importance, from results built by hand (no compiles)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from search_objectives import evaluate, gemm_configs

from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.tune.search import SearchSettings, StudyFeed, replay
from tilelab.views.search import best_so_far, best_so_far_svg, importance_svg, parameter_importance, search_html

EVIL = "<img src=x onerror=alert(1)>&\"'"
SPACE = {"block_M": [32, 64, 128, 256], "block_N": [32, 64, 128, 256], "block_K": [32, 64], "num_stages": [2, 3]}


def _result(rows, name="matmul", configs=None, swept=("block_M", "block_N")) -> TuneResult:
    configs = configs or tuple(row.config for row in rows)
    result = TuneResult(name, tuple(configs), swept, "cpu")
    for row in rows:
        result.add(row)
    return result


def _searched() -> TuneResult:
    configs = gemm_configs(**SPACE)
    feed = StudyFeed(configs, list(SPACE), list(enumerate(configs)), [], SearchSettings("optuna", "optuna", 20, 0, "tpe", True), 2, True)
    rows = [replace(row, elapsed_s=0.5 * row.trial) for row in replay(feed, evaluate)]
    result = _result(rows, configs=configs, swept=tuple(SPACE))
    result.study, result.search = feed.study, SearchSettings("optuna", "optuna", 20, 0, "tpe", True)
    return result


def _row(index, latency, status=TuneStatus.OK, elapsed=None, cached=False, **config):
    return TuneRow(index, config, status, latency_ms=latency, trial=index, elapsed_s=elapsed, cached=cached)


def test_best_so_far_follows_the_benchmarks_in_the_order_they_finished():
    rows = [
        _row(0, 3.0, elapsed=2.0, block_M=1, block_N=1),
        _row(1, 2.0, elapsed=1.0, block_M=1, block_N=2),
        _row(2, 9.0, TuneStatus.PRUNED, elapsed=3.0, block_M=2, block_N=1),
        _row(3, None, TuneStatus.COMPILE_ERROR, elapsed=0.5, block_M=2, block_N=2),
        _row(4, 0.5, elapsed=None, cached=True, block_M=3, block_N=3),  # from the history: not a benchmark of this run
        _row(5, 1.0, elapsed=4.0, block_M=3, block_N=1),
    ]

    frame = best_so_far(_result(rows))

    assert list(frame["trial"]) == [1, 0, 2, 5]
    assert list(frame["best_ms"]) == [2.0, 2.0, 2.0, 1.0]  # a pruned benchmark counts, but never as the best
    assert list(frame["benchmark"]) == [1, 2, 3, 4] and list(frame["status"]) == ["ok", "ok", "pruned", "ok"]


def test_best_so_far_svg_is_a_step_line_over_dots_with_no_script():
    result = _searched()

    for axis in ("benchmarks", "wall"):
        svg = best_so_far_svg(result, axis, reference=0.26)
        tree = ET.fromstring(svg)
        circles = tree.findall("{http://www.w3.org/2000/svg}circle")
        assert len(circles) == len(best_so_far(result))
        assert "<script" not in svg and "var(--jp-brand-color1" in svg
        assert tree.find("{http://www.w3.org/2000/svg}path") is not None


def test_wall_time_axis_needs_a_known_axis_name():
    with pytest.raises(ValueError, match="x='time'"):
        best_so_far_svg(_searched(), "time")


def test_importance_ranks_the_parameters_that_move_the_latency():
    found, method = parameter_importance(_searched())

    assert set(found) == set(SPACE) and method in ("fANOVA", "main effects")
    assert abs(sum(found.values()) - 1.0) < 1e-6
    bars = ET.fromstring(importance_svg(_searched())).findall("{http://www.w3.org/2000/svg}rect")
    assert len(bars) == len(SPACE)


def test_importance_of_a_grid_comes_from_its_rows():
    rows = [_row(i, 1.0 + m + 0.01 * n, block_M=m, block_N=n) for i, (m, n) in enumerate((m, n) for m in range(3) for n in range(3))]

    found, _ = parameter_importance(_result(rows))

    assert found["block_M"] > found["block_N"]


def test_too_few_timed_configs_say_so_instead_of_drawing_bars():
    result = _result([_row(0, 1.0, block_M=1, block_N=1)])

    assert parameter_importance(result) == ({}, "needs at least 3 timed configs")
    assert "needs at least 3 timed configs" in importance_svg(result)
    assert "no benchmarks yet" in best_so_far_svg(_result([_row(0, None, TuneStatus.COMPILE_ERROR, block_M=1, block_N=1)]))


def test_user_strings_are_escaped_in_every_chart():
    rows = [_row(i, 1.0 + i, elapsed=float(i), **{EVIL: i, "block_N": i % 2}) for i in range(4)]
    result = _result(rows, name=EVIL, swept=(EVIL, "block_N"))

    page = search_html(result)

    assert "<img" not in page and "onerror=alert(1)>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    for svg in re.findall(r"<svg.*?</svg>", page, flags=re.S):
        ET.fromstring(svg)  # well-formed: nothing broke out of an attribute or a text node
