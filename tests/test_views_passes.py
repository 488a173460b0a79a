"""The Passes tab: its data (pass rows, diffs as CodeMirror changes with or without whitespace, IR search), the snapshot
drawn from that data alone, and the widget that receives the same data."""

from __future__ import annotations

import pytest
from htmlcheck import parse
from sample_records import IR_LAYOUT, IR_LOWERED, IR_START, sample_record
from tabdata import as_sent, quickstart_record, reads_records

import tilelab
from tilelab.views._diffdata import DiffData, line_changes
from tilelab.views._diffhtml import diff_snapshot
from tilelab.views.explorer import ExplorerView
from tilelab.views.html import sanitiser_proof
from tilelab.views.passes.data import PassesData, pass_diff, pass_rows, passes_data, passes_texts, search_passes
from tilelab.views.passes.snapshot import passes_snapshot


def _changed_text(changes, before, after):
    """The removed and added pieces of text that ``changes`` mark."""
    return [before[fa:ta] for fa, ta, _, _ in changes], [after[fb:tb] for _, _, fb, tb in changes]


def test_pass_rows_list_every_pass_with_its_mark_and_time_but_no_ir():
    record = sample_record()

    rows = pass_rows(record.passes)

    assert [row["name"] for row in rows] == [p.name for p in record.passes]
    assert [row["changed"] for row in rows] == [True, False, True, False, True]
    assert rows[2]["ms"] == 4.0 and rows[2]["time"] == "4.00 ms"
    assert rows[2]["delta"] == f"+{rows[2]['added']} −{rows[2]['removed']}" and rows[1]["delta"] == ""
    assert all("ir" not in row for row in rows)


def test_a_pass_is_diffed_against_the_pass_before_it_by_default():
    diff = pass_diff(sample_record().passes, 2)

    assert (diff["base"], diff["base_name"]) == (1, "tl.Simplify")
    assert (diff["before"], diff["after"]) == (IR_START, IR_LAYOUT)
    removed, added = _changed_text(diff["changes"], diff["before"], diff["after"])
    assert "".join(added).strip() == "# swizzled" and "".join(removed) == ""
    assert (diff["added"], diff["removed"]) == (1, 1)


def test_a_pass_can_be_diffed_against_any_chosen_pass():
    diff = pass_diff(sample_record().passes, 4, base=0)

    assert (diff["base"], diff["before"], diff["after"]) == (0, IR_START, sample_record().passes[4].ir)
    _, added = _changed_text(diff["changes"], diff["before"], diff["after"])
    assert "tma_load" in added and any("fence()" in piece for piece in added)


def test_the_first_pass_has_nothing_before_it():
    diff = pass_diff(sample_record().passes, 0)

    assert diff["base"] is None and diff["before"] == "" and diff["after"] == IR_START


def test_an_unknown_pass_is_refused_with_the_valid_indices():
    with pytest.raises(KeyError, match=r"indices run 0\.\.4"):
        pass_diff(sample_record().passes, 9)


def test_ignoring_whitespace_hides_reindented_lines_but_not_real_changes():
    before = "for i in range(4):\n    x = a[i]\n    y = b[i]\n"
    after = "for i in range(4):\n    if i < 2:\n        x = a[i]\n        y = b[i]\n"

    ignoring = line_changes(before, after, ignore_whitespace=True)
    counting = line_changes(before, after, ignore_whitespace=False)

    assert _changed_text(ignoring, before, after)[1] == ["    if i < 2:\n"]
    assert len(_changed_text(counting, before, after)[1]) > 1


def test_changed_words_inside_a_replaced_line_are_marked_alone():
    changes = line_changes("copy(A, A_shared)\n", "tma_load(A, A_shared)\n")

    assert _changed_text(changes, "copy(A, A_shared)\n", "tma_load(A, A_shared)\n") == (["copy"], ["tma_load"])


def test_change_offsets_count_utf16_units_as_javascript_does():
    before, after = "a = 1  # 🙂\nb = 2\n", "a = 1  # 🙂\nb = 3\n"

    ((from_a, to_a, from_b, to_b),) = line_changes(before, after)

    assert (from_a, to_a) == (len("a = 1  # 🙂\nb = ".encode("utf-16-le")) // 2, 17)
    assert (from_b, to_b) == (from_a, to_a)


def test_ir_search_lists_where_a_name_first_appears_and_where_it_goes():
    passes = sample_record().passes

    found = search_passes(passes, "tma_load")

    assert [(hit["index"], hit["kind"], hit["before"], hit["after"]) for hit in found["hits"]] == [(4, "first", 0, 1)]
    assert found["hits"][0]["line"] == IR_LOWERED.splitlines().index("        tma_load(A, A_shared)") + 1
    gone = search_passes(passes, "copy(")
    assert [(hit["index"], hit["kind"]) for hit in gone["hits"]] == [(0, "first"), (4, "removes")]
    assert gone["hits"][1]["side"] == "a" and gone["final"] == 0


def test_ir_search_takes_regexes_and_refuses_bad_ones_in_one_line():
    passes = sample_record().passes

    assert search_passes(passes, r"tma_\w+", regex=True)["hits"][0]["index"] == 4
    with pytest.raises(ValueError, match="not a valid regular expression"):
        search_passes(passes, "(", regex=True)
    with pytest.raises(ValueError, match="type something"):
        search_passes(passes, "")


def test_the_passes_data_answers_the_browsers_requests():
    data = PassesData(sample_record().passes)

    assert data.ir({"index": 3})["text"] == IR_LAYOUT
    assert data.diff({"index": 2, "base": None, "ignore_whitespace": False})["base"] == 1
    assert data.search({"query": "fence"})["hits"][0]["index"] == 4


def test_the_snapshot_lists_every_pass_and_diffs_only_the_changed_ones():
    record = sample_record()

    tree = parse(f"<div>{passes_snapshot(passes_data(record), passes_texts(record))}</div>")

    (listing,) = tree.find_all("pre", data_tilelab="passes")
    assert "● tl.LayoutInference" in listing.all_text() and "○ tl.Simplify" in listing.all_text()
    assert len(tree.find_all("pre", data_tilelab="diff")) == 2


def test_a_snapshot_diff_is_cut_after_its_line_budget_and_says_so():
    before = "".join(f"line {i}\n" for i in range(100))
    after = "".join(f"line {i} changed\n" for i in range(100))

    tree = parse(f"<div>{diff_snapshot(DiffData(before, after).to_dict(), max_lines=10)}</div>")

    (diff,) = tree.find_all("pre", data_tilelab="diff")
    assert len(diff.all_text().splitlines()) == 10
    assert "more diff lines in the live view" in tree.all_text()


def test_a_whitespace_only_change_counts_the_same_in_the_pass_list_the_diff_header_and_the_run_summary():
    from dataclasses import replace

    from tilelab.changes import record_changes
    from tilelab.diffs import pass_change

    before = "for i in range(4):\n    A[i] = B[i]\n"
    after = "for i in range(4):\n        A[i] = B[i]  \n"  # re-indented, trailing spaces
    changed, added, removed = pass_change(before, after)  # what the recorder stores on the pass row
    record = sample_record()
    passes = (replace(record.passes[0], ir=before), replace(record.passes[1], ir=after, changed=changed, added=added, removed=removed))
    first = replace(record, passes=passes, source=replace(record.source, device=before))
    second = replace(first, source=replace(record.source, device=after))

    header = pass_diff(passes, 1)
    summary = record_changes(first, second)

    assert changed and (added, removed) == (header["added"], header["removed"]) == (0, 0)
    assert (summary.cuda_added, summary.cuda_removed) == (0, 0)
    assert diff_snapshot(header) == "<p>Only whitespace changed.</p>"


def test_the_passes_snapshot_is_drawn_from_the_tabs_json_alone():
    record = quickstart_record()
    data, texts = passes_data(record), passes_texts(record)

    drawn = passes_snapshot(as_sent(data), as_sent(texts))

    assert as_sent(data) == data and as_sent(texts) == texts
    assert sanitiser_proof(f"<summary style='cursor:pointer;font-weight:600'>Passes (85, 36 changed)</summary><div style='margin:4px 0 4px 12px'>{drawn}</div>") in tilelab.to_html(record)
    assert not reads_records("views/passes/snapshot.py")


def test_the_widget_receives_the_same_passes_data_and_texts():
    record = quickstart_record()
    data, texts = passes_data(record), passes_texts(record)

    core = ExplorerView(record).core

    assert core.passes == data and core.pass_index == data["first"]
    asked = [core.answer({"id": k, "type": "diff", "index": diff["index"]}) for k, diff in enumerate(texts["diffs"])]
    assert [{key: value for key, value in reply.items() if key not in ("id", "type")} for reply in asked] == texts["diffs"]
    final = core.answer({"id": 0, "type": "ir", "index": texts["final"]["index"]})
    assert {key: value for key, value in final.items() if key not in ("id", "type")} == texts["final"]
