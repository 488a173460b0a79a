"""The tuning view's rows: a large sweep shows its latest rows, and a click on a column's name asks for every row in
that column's order (the data decides the order, the arrow and the note; both renderers draw them)."""

from __future__ import annotations

from dataclasses import replace

from htmlcheck import parse
from tabdata import as_sent

from tilelab.tune.noise import Verdict
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.views.tuning import TuningView
from tilelab.views.tuning.data import ROW_LIMIT, rows_data
from tilelab.views.tuning.snapshot import rows_html

EVIL = "<img src=x onerror=alert(1)>"


def _sweep(size: int = ROW_LIMIT + 50) -> TuneResult:
    """``size`` configs of ``block``; config 7 is the fastest (0.1 ms), every tenth failed to compile."""
    configs = tuple({"block": 16 * (i + 1)} for i in range(size))
    result = TuneResult("matmul", configs, ("block",), "NVIDIA H200")
    for index, config in enumerate(configs):
        if index % 10 == 3:
            result.add(TuneRow(index, config, TuneStatus.COMPILE_ERROR, error=f"ptxas: too much shared memory {EVIL}"))
        else:
            result.add(TuneRow(index, config, TuneStatus.OK, latency_ms=0.1 if index == 7 else 1.0 + index / 1000))
    return result


def _column(rows: dict, name: str) -> list[str]:
    position = rows["columns"].index(name)
    return [line[position] for line in rows["cells"]]


def test_a_large_sweep_shows_its_latest_rows_and_says_so():
    rows = rows_data(_sweep())

    assert len(rows["cells"]) == ROW_LIMIT and _column(rows, "block")[0] == str(16 * 51)
    assert (rows["sort"], rows["of"], rows["note"]) == (None, 250, "the latest 200 of 250 rows")
    assert rows["headers"] == rows["columns"]
    assert "128" not in _column(rows, "block") and "0.100" not in _column(rows, "latency_ms")  # the fastest: out of sight


def test_sorting_by_latency_brings_the_fastest_config_of_every_row_to_the_top_and_failures_last():
    rows = rows_data(_sweep(), sort={"column": "latency_ms", "descending": False})

    assert _column(rows, "latency_ms")[:3] == ["0.100", "1.000", "1.001"] and _column(rows, "block")[0] == "128"
    assert rows["sort"] == {"column": "latency_ms", "descending": False, "arrow": "▲"}
    assert rows["headers"][rows["columns"].index("latency_ms")] == "latency_ms ▲"
    assert rows["note"] == "the first 200 of 250 rows by latency_ms"

    slowest_first = rows_data(_sweep(), sort={"column": "latency_ms", "descending": True})
    assert _column(slowest_first, "latency_ms")[0] == "1.249" and "0.100" not in _column(slowest_first, "latency_ms")

    everything = rows_data(_sweep(30), sort={"column": "latency_ms", "descending": True})
    assert _column(everything, "status")[-3:] == ["compile_error"] * 3  # missing latencies last, either way
    assert everything["note"] is None


def test_sorting_by_the_best_mark_puts_the_re_benchmarks_best_first_then_its_ties():
    result = _sweep(30)
    for index, ms in ((7, 0.1), (8, 0.1), (9, 0.11)):
        result.add(replace(result.rows[index], rebench_ms=ms))
    result.verdict = Verdict(best=7, runner_up=8, margin_pct=0.5, noise_pct=1.0, tied=(8,))

    rows = rows_data(result, sort={"column": "best", "descending": False})

    assert _column(rows, "best")[:3] == ["★", "≈", ""] and _column(rows, "block")[:2] == ["128", "144"]


def test_a_request_naming_no_shown_column_keeps_the_spaces_order():
    for sort in ({"column": "nope"}, {"column": ["latency_ms"]}, "latency_ms", {"descending": True}, None):
        assert rows_data(_sweep(30), sort=sort)["sort"] is None


def test_the_widget_answers_a_sort_request_with_the_data_the_snapshot_draws():
    view = TuningView(_sweep())
    sort = {"column": "latency_ms", "descending": False}

    reply = as_sent(view.widget.answer({"id": 3, "type": "tuning", "sort": sort}))

    assert reply["rows"] == as_sent(rows_data(view.result, sort=sort))
    assert reply["pivot"] == as_sent(view.data())["pivot"] and view.data()["rows"]["sort"] is None  # nothing else moves
    drawn = parse(rows_html(reply["rows"]))
    assert [th.all_text() for th in drawn.find_all("th")][:3] == ["block", "status", "latency_ms ▲"]
    assert "the first 200 of 250 rows by latency_ms" in drawn.all_text()


def test_a_hostile_error_stays_text_when_sorted_on():
    rows = rows_data(_sweep(30), sort={"column": "error", "descending": False})

    markup = rows_html(rows)

    assert EVIL not in markup and "&lt;img src=x" in markup
    assert _column(rows, "error")[0].endswith(EVIL)  # the data holds the text; the renderer escapes it


def test_the_figures_scanned_first_follow_the_config_and_how_each_was_timed_comes_after_them():
    configs = ({"block_M": 64, "block_N": 128},)
    result = TuneResult("matmul", configs, ("block_M", "block_N"), "NVIDIA H200")
    result.add(TuneRow(
        0, configs[0], TuneStatus.OK, latency_ms=0.2, tflops=600.0, gbps=100.0, compile_s=2.0, bench_s=0.5,
        latency_min_ms=0.19, latency_median_ms=0.2, latency_p90_ms=0.21, latency_std_ms=0.01, repetitions=100,
        registers=128, spills=0, shared_bytes=49152, occupancy=0.25, launchable=True, roofline_ms=0.15, trial=0,
        chosen_by="grid", elapsed_s=3.0, timing="cuda events", noise_low_ms=0.199, noise_high_ms=0.201, cache="fresh",
    ))  # fmt: skip

    columns = rows_data(result)["columns"]

    assert columns[:9] == ["block_M", "block_N", "status", "latency_ms", "tflops", "gbps", "roofline_pct", "registers", "spills"]
    assert columns.index("roofline_ms") < columns.index("latency_min_ms") < columns.index("timing") < columns.index("compile_s")
    assert columns[-1] == "cache"
