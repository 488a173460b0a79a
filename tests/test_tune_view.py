"""The tuning view and the result's answers, from results built by hand (no compiles)."""

from __future__ import annotations

import re

import pytest

from tilelab.registry import Registry
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.views.tuning import TuningView

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
LATENCY = {(64, 64): 0.9, (64, 128): 0.5, (128, 64): 0.7, (128, 128): None}


def _result(running=False) -> TuneResult:
    configs = tuple({"block_M": m, "block_N": n} for (m, n) in LATENCY)
    result = TuneResult("matmul", configs, ("block_M", "block_N"), "NVIDIA H100", running=running)
    for index, (config, latency) in enumerate(zip(configs, LATENCY.values(), strict=True)):
        status = TuneStatus.OK if latency else TuneStatus.MISMATCH
        error = None if latency else "output 0 differs from the reference (max abs diff 3)"
        result.add(TuneRow(index, config, status, error, latency, compile_s=2.0, bench_s=0.2, device="NVIDIA H100"))
    result.compiled = result.benchmarked = 4
    return result


def test_best_is_the_fastest_ok_row():
    result = _result()

    assert result.best_config == {"block_M": 64, "block_N": 128}
    assert result.num_errors == 1
    assert repr(result) == "<TuneResult matmul done: 4/4 configs, 1 failed, best 0.5 ms at block_M=64, block_N=128>"


def test_summary_lists_the_run_in_the_registry():
    registry, events = Registry(), []
    registry.subscribe(lambda event, item: events.append((event, item.summary())))
    result = _result(running=True)

    registry.track_tuning(result)

    assert registry.tuning_run(result.id) is result
    event, summary = events[0]
    assert event == "tuning"
    assert summary["total"] == 4 and summary["done"] == 4 and summary["failed"] == 1 and summary["running"]
    assert summary["best_config"] == {"block_M": 64, "block_N": 128} and summary["best_latency_ms"] == 0.5


def test_snapshot_holds_progress_pivot_and_rows_without_scripts():
    html = TuningView(_result()).to_html()

    assert "<script" not in html
    assert "<b>matmul</b> on NVIDIA H100: 4/4 configs, done" in html
    highlighted = re.findall(r"#T_\w+_(row\d+_col\d+) \{[^}]*font-weight: bold", html)
    assert highlighted == ["row0_col1"]  # block_M=64 (row 0) x block_N=128 (column 1)
    assert "max abs diff 3" in html


def test_mime_bundle_has_widget_snapshot_and_text():
    pytest.importorskip("plotly")
    bundle = _result()._repr_mimebundle_()

    assert set(bundle) == {WIDGET_MIME, "text/html", "text/plain"}
    assert bundle["text/plain"].startswith("<TuneResult matmul")


def test_live_widget_heat_map_follows_the_rows():
    pytest.importorskip("plotly")
    result = _result(running=True)
    view = TuningView(result)
    progress, figure, _table = view.widget.children

    assert list(figure.data[0].z[0]) == [0.9, 0.5]
    result.rows.pop(1)
    result.running = False
    view.refresh(final=True)

    assert figure.data[0].z[0][1] is None
    assert "3/4 configs, done" in progress.value


def test_pivot_needs_two_swept_parameters():
    result = TuneResult("k", ({"block": 1},), ("block",), "cpu")

    with pytest.raises(ValueError, match="two swept parameters"):
        result.pivot()
