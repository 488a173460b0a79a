"""The Machine code tab's data model: the snapshot is drawn from the tab's JSON alone, and the widget receives that JSON."""

from __future__ import annotations

from dataclasses import replace

from sample_records import sample_record
from tabdata import as_sent, quickstart_record, reads_records

import tilelab
from tilelab.views.explorer import ExplorerView
from tilelab.views.html import sanitiser_proof
from tilelab.views.machine.data import MAX_CODE_LINES, machine_data, machine_texts
from tilelab.views.machine.snapshot import machine_snapshot


def _reply(core, kind: str, **content) -> dict:
    return {key: value for key, value in core.answer({"id": 1, "type": kind, **content}).items() if key not in ("id", "type")}


def test_the_machine_snapshot_is_drawn_from_the_tabs_json_alone():
    record = quickstart_record()
    data, texts = machine_data(record), machine_texts(record)

    drawn = machine_snapshot(as_sent(data), as_sent(texts))

    assert as_sent(data) == data and as_sent(texts) == texts
    assert sanitiser_proof(f"<summary style='cursor:pointer;font-weight:600'>Machine code</summary><div style='margin:4px 0 4px 12px'>{drawn}</div>") in tilelab.to_html(record)
    assert not reads_records("views/machine/snapshot.py")


def test_the_widget_receives_the_same_machine_data_and_listings():
    record = quickstart_record()
    data, texts = machine_data(record), machine_texts(record)

    core = ExplorerView(record).core

    assert _reply(core, "machine") == data
    assert {code: _reply(core, "machine_listing", code=code) for code in data["codes"]} == texts


def test_the_machine_data_has_a_state_a_card_classes_and_the_snapshots_first_lines():
    record = quickstart_record()

    data, texts = machine_data(record), machine_texts(record)

    assert (data["state"], data["head"], data["codes"]) == ("ready", "sm_90 (built as sm_90a)", ["sass", "ptx"])
    (kernel,) = data["kernels"]
    assert kernel["name"] == "gemm_kernel" and kernel["card"]["launchable"]
    assert sum(row["count"] for row in kernel["classes"]) == kernel["instructions"]
    assert {row["class"]: row["colour"] for row in kernel["classes"]}["other"] == "#666"
    assert len(texts["sass"]["lines"]) == MAX_CODE_LINES < texts["sass"]["total"]
    assert [name for name, _path, _short in data["tools"]] == list(record.machine_code.tools)


def test_a_record_without_machine_code_has_no_head_and_no_machine_section():
    record = replace(sample_record(), machine_code=None)

    data = machine_data(record)

    assert data["head"] is None and data["kernels"] == [] and machine_texts(record) == {}
    assert "data-section='machine'" not in tilelab.to_html(record)
