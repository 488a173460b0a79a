"""The Profile tab's data model: the snapshot is drawn from the tab's JSON alone, and the widget receives that JSON."""

from __future__ import annotations

from pathlib import Path

from htmlcheck import charts, parse
from sample_records import sample_record
from tabdata import as_sent, quickstart_record, reads_records

import tilelab
from tilelab.counters.ncu import parse_ncu_csv
from tilelab.counters.summary import summarize
from tilelab.views.explorer import ExplorerView
from tilelab.views.html import sanitiser_proof
from tilelab.views.profile.data import profile_data
from tilelab.views.profile.snapshot import profile_snapshot

DATA = Path(__file__).parent / "data"


def profiled(estimate=True):
    """The quickstart GEMM with the ncu report of it captured on an H100 (tests/data)."""
    record = quickstart_record()
    frame = parse_ncu_csv((DATA / "ncu_gemm_h100_details.csv").read_text())
    return record.with_profile(summarize(frame, record.estimate if estimate else None, "sm_90", "NVIDIA H100 80GB HBM3"))


def test_the_profile_snapshot_is_drawn_from_the_tabs_json_alone():
    record = profiled()
    data = profile_data(record)

    drawn = profile_snapshot(as_sent(data))

    assert as_sent(data) == data
    assert sanitiser_proof(f"<summary style='cursor:pointer;font-weight:600'>Profile</summary><div style='margin:4px 0 4px 12px'>{drawn}</div>") in tilelab.to_html(record)
    assert not reads_records("views/profile/snapshot.py")


def test_the_widget_receives_the_same_profile_data():
    record = profiled()

    reply = ExplorerView(record).core.answer({"id": 5, "type": "profile"})

    assert (reply.pop("id"), reply.pop("type")) == (5, "profile")
    assert reply == profile_data(record)


def test_the_profile_data_has_its_sections_in_order_with_their_labels_and_the_plots_geometry():
    (kernel,) = profile_data(profiled())["kernels"]

    assert [section["title"] for section in kernel["sections"]] == [
        "Speed of Light",
        "Roofline position",
        "Occupancy",
        "Launch",
        "Advice (ncu)",
    ]
    bars, roofline = kernel["sections"][0]["bars"], kernel["sections"][1]
    assert bars[0] == {"label": "Compute (SM)", "width": 18.46, "text": "18.5 % of peak"}
    plot = roofline["plot"]
    assert plot["left"] <= plot["point"]["x"] <= plot["width"] - plot["right"]
    assert plot["top"] <= plot["point"]["y"] <= plot["height"] - plot["bottom"]
    assert plot["point"]["label"] == "96.7 TFLOP/s at 510 FLOP/byte"


def test_without_flops_the_roofline_section_has_rows_but_no_plot():
    (kernel,) = profile_data(profiled(estimate=False))["kernels"]

    roofline = next(section for section in kernel["sections"] if section["kind"] == "roofline")

    assert roofline["plot"] is None and ["peaks", roofline["rows"][-1][1]] == roofline["rows"][-1]
    assert not charts(parse(profile_snapshot(profile_data(profiled(estimate=False)))))


def test_a_record_without_a_profile_has_no_profile_section():
    assert "data-section='profile'" not in tilelab.to_html(sample_record())
