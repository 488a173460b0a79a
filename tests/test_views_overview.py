"""The Overview tab's data model: the snapshot is drawn from the tab's JSON alone, and the widget receives that JSON."""

from __future__ import annotations

from dataclasses import replace

from htmlcheck import parse
from sample_records import EVIL, failed_record, sample_record
from tabdata import as_sent, quickstart_record, reads_records
from tune_kernels import scale_add

import tilelab
from tilelab.records import ErrorRecord, LaunchRecord
from tilelab.views.explorer import ExplorerView
from tilelab.views.html import sanitiser_proof
from tilelab.views.overview.data import overview_data
from tilelab.views.overview.snapshot import overview_snapshot

OPEN_SECTION = "<details open data-section='overview' style='margin:6px 0'><summary style='cursor:pointer;font-weight:600'>Overview</summary><div style='margin:4px 0 4px 12px'>"


def test_the_overview_snapshot_is_drawn_from_the_tabs_json_alone():
    record = quickstart_record()
    data = overview_data(record)

    drawn = overview_snapshot(as_sent(data))

    assert as_sent(data) == data
    assert sanitiser_proof(f"{OPEN_SECTION}{drawn}</div></details>") in tilelab.to_html(record)
    assert not reads_records("views/overview/snapshot.py")


def test_the_widget_receives_the_same_overview_data():
    record = quickstart_record()

    reply = ExplorerView(record).core.answer({"id": 3, "type": "overview"})

    assert (reply.pop("id"), reply.pop("type")) == (3, "overview")
    assert reply == overview_data(record)


def test_the_overview_rows_are_plain_text_and_say_how_they_read():
    rows = {row["label"]: row for row in overview_data(quickstart_record())["rows"]}

    assert (rows["target"]["text"], rows["target"]["note"]) == ("sm_90", '{"arch": "sm_90", "kind": "cuda"}')
    assert rows["cache"]["kind"] == "provenance" and rows["cache"]["text"].startswith("compiled fresh in 0.59 s · key")
    assert rows["resources"]["text"].startswith("240 registers/thread, 0 B spilled")
    assert rows["passes"]["text"] == "85 (36 changed the IR)"


def test_a_failed_compiles_error_names_its_place_and_the_cell_line_the_live_view_links():
    in_file = overview_data(failed_record())["failure"]
    in_cell = overview_data(replace(failed_record(), error=ErrorRecord("lower", f"bad {EVIL}", "<tilelang-cell-3>", 7)))["failure"]

    assert (in_file["title"], in_file["place"], in_file["line"], in_file["link"]) == ("lower error", "<cell>", 7, False)
    assert (in_cell["place"], in_cell["link"]) == ("this cell", True)
    (link,) = parse(overview_snapshot(overview_data(replace(failed_record(), error=ErrorRecord("lower", EVIL, "<tilelang-cell-3>", 7))))).find_all(data_tilelab_line="7")
    assert link.all_text() == "line 7"


def test_an_error_without_a_line_in_the_cell_names_no_place():
    error = overview_data(replace(sample_record(), error=ErrorRecord("elaborate", "no", "<tilelang-cell-1>", None)))["failure"]

    assert error["place"] is None and error["log"] == ""


def test_a_failed_compiles_reply_is_no_request_error():
    reply = ExplorerView(failed_record()).core.answer({"id": 1, "type": "overview"})

    assert "error" not in reply and reply["failure"]["title"] == "lower error"


def test_a_cpu_kernel_has_no_launch_and_its_overview_says_its_blocks_run_as_a_loop():
    record = tilelab.explore(scale_add, N=256, block=32, target="c", machine_code=False)
    # what records written before this change held for it: the host function's empty thread extent read as a launch
    older = replace(record, launches=(LaunchRecord((1, 1, 1), (1, 1, 1), 0, kernel="main_kernel"),))

    assert record.ok and record.launches == () and record.launchable
    for shown in (record, older):
        rows = [row for row in overview_data(shown)["rows"] if row["label"].startswith("launch")]
        assert [row["text"] for row in rows] == ["none: a host function, whose T.Kernel blocks run as a loop in it on the CPU"]
        assert "grid" not in overview_snapshot(overview_data(shown))


def test_a_launchs_shared_memory_reads_in_kib_beside_its_bytes():
    (launch,) = [row for row in overview_data(sample_record())["rows"] if row["label"] == "launch"]

    assert launch["text"] == "grid 8 × 8 × 1, 128 threads (128 × 1 × 1), 49152 B (48 KiB) dynamic shared memory"
