"""tilelab.compare: the same pass of two records side by side, and passes only one ran."""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path

import pytest
from htmlcheck import parse
from sample_records import gemm_record, sample_record

import tilelab
from tilelab.diffs import align_passes, only_in
from tilelab.records import PassRecord
from tilelab.views import compare
from tilelab.views._bundle import WIDGET_MIME
from tilelab.views.compare import CompareView
from tilelab.views.compare.data import WIDGET_KEYS
from tilelab.views.compare.snapshot import compare_html, compare_text
from tilelab.views.html import sanitiser_proof


def _pair():
    a = sample_record(arch="sm_80")
    extra = PassRecord(5, "tl.WarpSpecialized", a.passes[-1].ir + "    # producer\n", True, 1, 0, 0.001)
    b = replace(sample_record(arch="sm_90"), passes=(*a.passes[:3], extra, *a.passes[3:]))
    return a, b


def test_passes_are_aligned_by_name_and_the_extra_one_is_listed():
    a, b = _pair()

    pairs = align_passes(a, b)

    assert (None, 3) in pairs and len(pairs) == 6
    assert only_in(a, b) == ([], ["tl.WarpSpecialized"])


def test_a_pass_recorded_as_pass_fn_pairs_with_the_pass_the_other_record_names_at_its_place():
    """A record saved before TileLab named TileLang's unnamed Python passes holds TVM's ``pass_fn`` for them."""
    a = sample_record()
    old = replace(a, passes=tuple(replace(p, name="pass_fn") if i == 2 else p for i, p in enumerate(a.passes)))

    assert align_passes(old, a) == [(i, i) for i in range(len(a.passes))]
    assert only_in(old, a) == ([], [])
    assert CompareView(old, a).data()["rows"][2][0::2] == ["pass_fn", a.passes[2].name, True]


def test_the_shown_pair_says_identical_ir_or_whitespace_only_as_the_widget_does():
    a = sample_record()
    spaced = replace(a, passes=(*a.passes[:-1], replace(a.passes[-1], ir=a.passes[-1].ir.replace(" ", "  "))))

    identical = parse(CompareView(a, a).to_html()).all_text()
    whitespace = parse(CompareView(a, spaced).to_html()).all_text()

    assert "Identical IR in both records." in identical and "whitespace" not in identical
    assert "Only whitespace changed." in whitespace


def test_selecting_a_pass_gives_both_irs_and_the_changes_between_them():
    a, b = _pair()
    view = CompareView(a, b, pass_name="tl.LowerTileOp")

    payload = view.payload(view.selected)

    assert payload["a"]["name"] == payload["b"]["name"] == "tl.LowerTileOp"
    assert payload["same"] and payload["changes"] == []
    extra = view.payload(view.row_of("tl.WarpSpecialized"))
    assert extra["a"] is None and not extra["same"]
    assert extra["before"] == "" and extra["after"].endswith("# producer\n") and extra["changes"]


def test_the_compare_widget_answers_a_row_request_and_refuses_a_bad_row():
    view = CompareView(*_pair())
    widget = view.widget
    sent = []
    widget.send = sent.append

    widget._handle_custom_msg({"id": 3, "type": "pair", "row": 1, "ignore_whitespace": True}, [])
    widget._handle_custom_msg({"id": 4, "type": "pair", "row": 99}, [])

    assert (sent[0]["id"], sent[0]["row"]) == (3, 1)
    assert sent[1]["id"] == 4 and "row 99 is not one of the 6 aligned passes" in sent[1]["error"]


def test_tilelab_compare_returns_a_view_with_a_well_formed_snapshot():
    view = tilelab.compare(*_pair())

    bundle = view._repr_mimebundle_()

    assert WIDGET_MIME in bundle and "0 + 1 passes in only one" in bundle["text/plain"]
    tree = parse(bundle["text/html"])
    (only,) = tree.find_all("table", data_tilelab="only-in")
    assert "tl.WarpSpecialized" in only.all_text()


@pytest.mark.slow
def test_sm80_and_sm90_gemms_differ_in_their_passes():
    view = CompareView(gemm_record("sm_80"), gemm_record("sm_90"))

    first, second = only_in(view.a, view.b)

    assert first or second
    parse(view.to_html())


def _roundtrip(data: dict) -> dict:
    return json.loads(json.dumps(data, allow_nan=False))


def test_the_snapshot_is_rendered_from_the_tab_data_alone():
    view = CompareView(*_pair(), pass_name="tl.WarpSpecialized")

    data = _roundtrip(view.data())  # plain JSON: what a saved notebook or the browser would hold

    assert data == view.data()
    assert sanitiser_proof(compare_html(data)) == view.to_html() and compare_text(data) == repr(view)
    assert data["shown"]["row"] == view.selected and data["shown"]["after"].endswith("# producer\n")


def test_the_snapshot_module_reads_no_records():
    tree = ast.parse(Path(compare.snapshot.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}

    assert not {name for name in imported if name.startswith(("tilelab.records", "tilelab.tune", "tilelab.diffs"))}


def test_the_widget_receives_the_tab_data_and_answers_the_row_the_snapshot_diffs():
    view = CompareView(*_pair())
    data = view.data()

    widget = view.widget
    reply = widget.answer({"id": 1, "type": "pair", "row": data["shown"]["row"]})

    assert {key: getattr(widget, key) for key in WIDGET_KEYS} == {key: data[key] for key in WIDGET_KEYS}
    assert {key: reply[key] for key in data["shown"]} == data["shown"]
