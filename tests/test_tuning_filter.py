"""The filter above the tuning view's rows: ``status!=ok``, ``block=128``, ``block=64|128``, ``latency_ms<1.005``, a
word such as ``ptxas``. The kernel reads it and keeps the rows it matches, before the sort and the 200-row limit, so a large
sweep's failures or one corner of its space are a few keystrokes away."""

from __future__ import annotations

from htmlcheck import parse
from tabdata import as_sent
from test_tune_view import _result as _two_parameters
from test_tuning_rows import EVIL, _column, _sweep

from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.views.tuning import TuningView
from tilelab.views.tuning.data import pivot_data, rows_data
from tilelab.views.tuning.row_filter import filter_for
from tilelab.views.tuning.snapshot import rows_html, tuning_html


def test_status_not_ok_keeps_every_failure_and_says_how_many_of_the_rows_match():
    rows = rows_data(_sweep(), row_filter="status!=ok")

    assert set(_column(rows, "status")) == {"compile_error"} and len(rows["cells"]) == 25
    assert (rows["matched"], rows["of"], rows["filter"], rows["filter_error"]) == (25, 250, "status!=ok", None)
    assert rows["note"] == "25 of 250 rows match"


def test_numbers_compare_by_value_and_terms_must_all_hold():
    assert _column(rows_data(_sweep(), row_filter="block=128"), "block") == ["128"]
    assert _column(rows_data(_sweep(), row_filter="block=128.0"), "block") == ["128"]

    fast = rows_data(_sweep(), row_filter="latency_ms<1.005")
    assert _column(fast, "latency_ms") == ["1.000", "1.001", "1.002", "1.004", "0.100"]  # failures have no number

    both = rows_data(_sweep(), row_filter="status=OK block<=64")  # text in any case
    assert _column(both, "block") == ["16", "32", "48"] and both["note"] == "3 of 250 rows match"


def test_a_word_alone_is_looked_for_in_every_value_and_quotes_keep_spaces():
    assert len(rows_data(_sweep(), row_filter="PTXAS")["cells"]) == 25
    assert len(rows_data(_sweep(), row_filter='"too much shared"')["cells"]) == 25
    assert len(rows_data(_sweep(), row_filter='error="ptxas: too much"')["cells"]) == 0  # = is the whole value
    assert rows_data(_sweep(), row_filter="error=")["matched"] == 225  # an empty value: a missing one
    assert rows_data(_sweep(), row_filter="error!=")["matched"] == 25


def test_a_bar_between_values_keeps_the_rows_that_have_any_of_them():
    assert _column(rows_data(_sweep(), row_filter="block=32|128|64"), "block") == ["32", "64", "128"]
    assert rows_data(_sweep(), row_filter="block!=32|128")["matched"] == 248  # neither
    assert rows_data(_sweep(), row_filter="status=timeout|COMPILE_ERROR")["matched"] == 25
    assert rows_data(_sweep(), row_filter="error=|nothing")["matched"] == 225  # no error, or that one
    assert rows_data(_sweep(), row_filter="nvcc|ptxas")["matched"] == 25  # a word alone: any of them, anywhere
    assert rows_data(_sweep(), row_filter="block=48|64 status=ok")["matched"] == 1  # config 3 (block 64) failed

    ordering = rows_data(_sweep(30), row_filter="latency_ms<1|2")
    assert ordering["filter_error"] == "latency_ms<1|2: < compares with one number (| gives alternatives to = and !=)"


def test_the_box_offers_an_example_of_the_sweeps_own_columns_and_values_that_reads_as_a_filter():
    rows = rows_data(_sweep())

    assert rows["example"] == "block=128|16 latency_ms<1.2"  # the two fastest configs' blocks; the faster half
    assert rows_data(_sweep(), row_filter="block=32")["example"] == rows["example"]  # not what the filter keeps
    example = rows_data(_sweep(), row_filter=rows["example"])
    assert (example["filter_error"], _column(example, "block")) == (None, ["16", "128"])

    # A value one would have to quote is passed over, for the next parameter's; lowered only: no latency to compare.
    configs = tuple({"layout": f"{name} major", "stages": stages} for name in ("row", "col") for stages in (2, 3))
    lowered = TuneResult("matmul", configs, ("layout", "stages"), "")
    for index, config in enumerate(configs):
        lowered.add(TuneRow(index, config, TuneStatus.COMPILED))
    assert rows_data(lowered)["example"] == "status!=ok stages=2|3"

    # A parameter whose name cannot be typed (an = in it) gives way to the next one.
    configs = tuple({EVIL: i, "block": 16 * (i + 1)} for i in range(3))
    hostile = TuneResult("matmul", configs, (EVIL, "block"), "NVIDIA H200")
    for index, config in enumerate(configs):
        hostile.add(TuneRow(index, config, TuneStatus.OK, latency_ms=1.0 + index))
    assert rows_data(hostile)["example"] == "block=16|32 latency_ms<2.1"


def test_a_filter_comes_before_the_sort_and_the_limit():
    rows = rows_data(_sweep(), row_filter="status=ok", sort={"column": "latency_ms", "descending": True})

    assert rows["matched"] == 225 and len(rows["cells"]) == 200 and _column(rows, "latency_ms")[0] == "1.249"
    assert rows["note"] == "225 of 250 rows match; the first 200 by latency_ms shown"
    assert rows_data(_sweep(), row_filter="status=ok")["note"] == "225 of 250 rows match; the latest 200 shown"
    assert rows_data(_sweep(), row_filter="block=128")["note"] == "1 of 250 rows matches"


def test_a_filter_that_cannot_be_read_says_why_and_every_row_still_counts():
    unknown = rows_data(_sweep(30), row_filter="status!=ok blok=128")
    assert unknown["filter_error"].startswith("blok=128: there is no column 'blok' (the columns: block, status, latency_ms, error)")
    assert (unknown["filter"], unknown["matched"], len(unknown["cells"])) == (None, 30, 30)

    assert rows_data(_sweep(30), row_filter="latency_ms<fast")["filter_error"] == (
        "latency_ms<fast: < compares numbers, and 'fast' is not one"
    )
    assert rows_data(_sweep(30), row_filter='"shared')["filter_error"] == "No closing quotation in the filter"
    assert rows_data(_sweep(30), row_filter="BLOCK=32")["filter_error"] is None  # a column's name in any case
    assert rows_data(_sweep(30), row_filter="   ")["filter"] is None


def test_when_no_row_matches_the_view_says_so_instead_of_no_rows_yet():
    rows = rows_data(_sweep(30), row_filter="block>100000")

    assert (rows["cells"], rows["note"]) == ([], "0 of 30 rows match")
    text = parse(rows_html(rows)).all_text()
    assert "no row matches the filter" in text and "no rows yet" not in text and "filter: block>100000" in text


def test_the_widget_answers_a_filtered_request_and_the_finished_view_keeps_its_unfiltered_data():
    view = TuningView(_sweep())
    unfiltered = as_sent(view.data())
    sort = {"column": "latency_ms", "descending": False}

    reply = as_sent(view.widget.answer({"id": 4, "type": "tuning", "sort": sort, "filter": "block<200"}))

    assert reply["rows"] == as_sent(rows_data(view.result, sort=sort, row_filter="block<200"))
    assert _column(reply["rows"], "block")[:2] == ["128", "16"] and reply["rows"]["note"] == "12 of 250 rows match"
    assert as_sent(view.data()) == unfiltered


def test_a_finished_view_first_asked_for_filtered_rows_still_shows_every_row_when_asked_plainly():
    view = TuningView(_sweep())

    filtered = as_sent(view.widget.answer({"id": 5, "type": "tuning", "sort": None, "filter": "block<200"}))
    plain = as_sent(view.data())

    assert filtered["rows"]["note"] == "12 of 250 rows match"
    assert plain["rows"] == as_sent(rows_data(view.result)) and plain["rows"]["matched"] == 250
    assert {key: value for key, value in plain.items() if key != "rows"} == {
        key: value for key, value in filtered.items() if key not in ("rows", "id", "type")  # the answer's envelope
    }


def test_hostile_filters_and_the_error_text_they_find_stay_text():
    found = rows_data(_sweep(30), row_filter="onerror")
    assert found["matched"] == 3 and all(error.endswith(EVIL) for error in _column(found, "error"))
    assert EVIL not in rows_html(found)

    for typed in (EVIL, "block<<script>alert(1)</script>", 'nope"<script>"=1'):
        markup = rows_html(rows_data(_sweep(30), row_filter=typed))
        assert "<script>" not in markup and "<img" not in markup
        assert "&lt;" in markup  # said back, escaped: as the filter or in why it could not be read


# -- the heat map shows the rows the filter keeps -------------------------------------------------------------------
def _heat(pivot: dict) -> list[list[str | None]]:
    return [[cell and cell["text"] for cell in row["cells"]] for row in pivot["rows"]]


def test_the_heat_map_shows_the_rows_the_filter_keeps_on_the_whole_grid():
    result = _two_parameters()  # block_M x block_N: 0.9 0.5 / 0.7 (a mismatch)

    everything, slice_ = pivot_data(result), pivot_data(result, row_filter="block_N=64")

    assert _heat(everything) == [["0.9", "0.5"], ["0.7", None]]
    assert _heat(slice_) == [["0.9", None], ["0.7", None]]
    assert slice_["columns"] == everything["columns"] == ["64", "128"]  # the grid does not move as one types
    assert slice_["rows"][1]["cells"][0]["best"] and not slice_["rows"][0]["cells"][0]["best"]
    assert "over the rows that match the filter" in slice_["caption"]
    assert pivot_data(result, row_filter="blok_N=64") == everything  # unreadable: the rows' table says why


def test_each_cell_of_the_heat_map_carries_the_filter_that_keeps_its_configs():
    result = _two_parameters()
    pivot = pivot_data(result)

    assert [row["filters"] for row in pivot["rows"]] == [
        ["block_M=64 block_N=64", "block_M=64 block_N=128"],
        ["block_M=128 block_N=64", "block_M=128 block_N=128"],
    ]
    empty = rows_data(result, row_filter=pivot["rows"][1]["filters"][1])  # the empty cell: its config failed
    assert (empty["matched"], _column(empty, "status")) == (1, ["mismatch"])
    sliced = pivot_data(result, row_filter="block_N=64")  # a filtered map's cells still name their whole configs
    assert [row["filters"] for row in sliced["rows"]] == [row["filters"] for row in pivot["rows"]]

    assert filter_for({"layout": "row major", "stages": 2}) == "'layout=row major' stages=2"  # quoted, as one types
    assert rows_data(_sweep(), row_filter=filter_for({"block": 128}))["matched"] == 1
    assert filter_for({EVIL: 1}) is None and filter_for({"split": "1|2"}) is None  # an = in a name, | in a value


def test_a_filter_that_keeps_no_timed_row_leaves_the_grid_empty_and_says_why():
    pivot = pivot_data(_two_parameters(), row_filter="status!=ok")

    assert _heat(pivot) == [[None, None], [None, None]]
    assert pivot["caption"] == "latency (ms) of matmul: no row that matches the filter has one"
    assert "no row that matches the filter has one" in parse(tuning_html(as_sent({**TuningView(_two_parameters()).data(), "pivot": pivot}))).all_text()


def test_the_widgets_filtered_answer_carries_the_filtered_heat_map_and_the_view_keeps_the_whole_one():
    view = TuningView(_two_parameters())
    whole = as_sent(view.data())

    reply = as_sent(view.widget.answer({"id": 6, "type": "tuning", "filter": "block_N=64"}))

    assert _heat(reply["pivot"]) == [["0.9", None], ["0.7", None]]
    assert as_sent(view.data()) == whole
