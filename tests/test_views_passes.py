"""The Passes tab: pass rows, pass diffs (word-level), lazy IR messages."""

from __future__ import annotations

import pytest
from sample_records import IR_LAYOUT, IR_START, sample_record

from tilelab.diffs import diff_lines, line_runs, side_by_side
from tilelab.views._passdata import pass_payload, pass_rows
from tilelab.views.passes import PassesWidget


def _changed_words(line):
    return [text for text, changed in line[3] if changed]


def test_pass_rows_list_every_pass_with_its_mark_and_time_but_no_ir():
    record = sample_record()

    rows = pass_rows(record.passes)

    assert [row["name"] for row in rows] == [p.name for p in record.passes]
    assert [row["changed"] for row in rows] == [True, False, True, False, True]
    assert rows[2]["ms"] == 4.0
    assert all("ir" not in row for row in rows)


def test_a_changed_pass_is_diffed_against_the_last_changed_pass_before_it():
    record = sample_record()

    payload = pass_payload(record.passes, 2)

    assert payload["base"] == 0 and payload["base_name"] == "tirx.BindTarget"
    assert payload["ir"] == IR_LAYOUT
    lines = [line for hunk in payload["hunks"] for line in hunk["lines"]]
    removed = [line for line in lines if line[0] == "-"]
    added = [line for line in lines if line[0] == "+"]
    assert [line[2] for line in added] == [2] and [line[1] for line in removed] == [2]
    assert "".join(_changed_words(added[0])).strip() == "# swizzled"
    assert _changed_words(removed[0]) == []


def test_an_unchanged_pass_shows_its_ir_and_an_empty_diff():
    payload = pass_payload(sample_record().passes, 3)

    assert payload["base"] == 2
    assert payload["hunks"] == []
    assert payload["ir"] == IR_LAYOUT


def test_the_first_pass_has_nothing_to_diff_against():
    payload = pass_payload(sample_record().passes, 0)

    assert payload["base"] is None and payload["hunks"] == [] and payload["ir"] == IR_START


def test_side_by_side_mode_pairs_each_removed_line_with_the_added_line_after_it():
    payload = pass_payload(sample_record().passes, 4, mode="split")

    hunk = payload["hunks"][0]
    pairs = [
        (hunk["lines"][a][0] if a is not None else None, hunk["lines"][b][0] if b is not None else None)
        for a, b in hunk["rows"]
    ]
    assert ("-", "+") in pairs
    assert (None, "+") in pairs  # fence() has no old counterpart


def test_an_unknown_diff_mode_is_refused_with_the_valid_ones():
    with pytest.raises(ValueError, match="unified"):
        pass_payload(sample_record().passes, 2, mode="sideways")


def test_line_runs_flag_only_the_words_that_differ():
    hunk = diff_lines("copy(A, A_shared)\n", "tma_load(A, A_shared)\n")[0]

    runs = line_runs(hunk.lines)

    assert [t for t, changed in runs[0] if changed] == ["copy"]
    assert [t for t, changed in runs[1] if changed] == ["tma_load"]
    assert side_by_side(hunk.lines) == [(0, 1)]


def test_the_passes_widget_sends_a_pass_ir_only_when_it_is_selected_or_fetched():
    widget = PassesWidget(sample_record())
    sent = []
    widget.send = sent.append

    state = {k: v for k, v in widget.get_state().items() if k not in ("_esm", "_css")}
    assert "alloc(128)" not in str(state)
    widget.selected = 2
    widget._on_message(widget, {"type": "fetch"}, [])
    widget.mode = "split"

    assert [(m["index"], m["mode"]) for m in sent] == [(2, "unified"), (2, "unified"), (2, "split")]
    assert sent[0]["ir"] == IR_LAYOUT
