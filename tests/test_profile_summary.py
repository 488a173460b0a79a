"""The ncu profile's summary (real captured H100 CSV, CPU): its numbers, the roofline position, records, the Profile tab."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest
from cells import gemm_cell
from htmlcheck import assert_inert, charts, parse
from kernels import matmul
from sample_records import sample_record, with_flat_peaks

import tilelab
from tilelab.counters.ncu import parse_ncu_csv
from tilelab.counters.summary import summarize
from tilelab.peaks import DEVICE_PEAKS
from tilelab.records import KernelRecord, ProfileRecord
from tilelab.registry import default_registry
from tilelab.views.explorer import PROFILE_TAB, TABS, ExplorerView, explorer_html
from tilelab.views.profile.data import profile_data
from tilelab.views.profile.snapshot import profile_snapshot

DATA = Path(__file__).parent / "data"
H100 = "NVIDIA H100 80GB HBM3"  # the device the fixtures were captured on
HOSTILE = ("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "{{7*7}}")


def profile_html(profile: ProfileRecord) -> str:
    return profile_snapshot(profile_data(sample_record().with_profile(profile)))


def details_frame():
    return parse_ncu_csv((DATA / "ncu_gemm_h100_details.csv").read_text())


@pytest.fixture(scope="module")
def gemm_record():
    """The quickstart GEMM (1024^3 fp16) lowered for sm_90: the kernel the fixtures profiled, with its static estimate."""
    return tilelab.explore(matmul, arch="sm_90", machine_code=False)


@pytest.fixture(scope="module")
def summary(gemm_record):
    return summarize(details_frame(), gemm_record.estimate, "sm_90", H100)


# -- the numbers -------------------------------------------------------------------------------
def test_the_summary_of_a_real_report_carries_the_csvs_numbers(summary):
    (kernel,) = summary.kernels

    assert (kernel.kernel, kernel.launch) == ("gemm_kernel", 0)
    assert kernel.duration_s == pytest.approx(22.21e-6)  # "Duration","us","22.21"
    assert (kernel.compute_throughput, kernel.memory_throughput, kernel.dram_throughput) == (18.46, 16.33, 5.67)
    assert (kernel.l1_throughput, kernel.l2_throughput) == (38.20, 16.15)
    assert kernel.dram_bytes_per_s == pytest.approx(189.52e9)  # "Memory Throughput","Gbyte/s","189.52"
    assert (kernel.achieved_occupancy, kernel.theoretical_occupancy) == (6.25, 12.5)
    assert kernel.occupancy_limiters == ("Registers", "Shared Mem")  # 2 blocks each, as ncu's rule says
    assert (kernel.registers_per_thread, kernel.block_size, kernel.grid_size, kernel.threads) == (230, 128, 64, 8192)
    assert kernel.shared_bytes_per_block == pytest.approx(49_150)  # 0 B static + "49.15" Kbyte dynamic
    assert kernel.waves_per_sm == 0.24


def test_the_roofline_position_is_the_estimates_flops_over_ncus_duration_against_h100_peaks(summary, gemm_record):
    roofline = summary.kernels[0].roofline
    peaks = DEVICE_PEAKS["H100 SXM"]

    assert gemm_record.estimate.flops == 2 * 1024**3
    assert roofline.peaks == peaks.for_operands(["float16"])
    assert (roofline.peaks.flops_per_s, roofline.peaks.bytes_per_s) == (989.5e12, 3.35e12)
    assert roofline.achieved_flops_per_s == pytest.approx(2 * 1024**3 / 22.21e-6)  # 96.7 TFLOP/s
    assert roofline.flops_percent == pytest.approx(2 * 1024**3 / 22.21e-6 / 989.5e12 * 100)  # 9.8 %
    assert roofline.bytes_percent == pytest.approx(189.52e9 / 3.35e12 * 100)  # 5.7 %, beside ncu's own 5.67 %
    assert roofline.intensity == pytest.approx(roofline.achieved_flops_per_s / 189.52e9)
    assert roofline.intensity > roofline.ridge  # a GEMM this size sits on the compute side


def test_without_an_estimate_there_are_bytes_per_second_but_no_flops_and_a_note_says_why():
    profile = summarize(details_frame(), None, "sm_90", H100, "a loop extent is not a constant")

    roofline = profile.kernels[0].roofline
    assert roofline.achieved_flops_per_s is None and roofline.flops_percent is None
    assert roofline.bytes_percent == pytest.approx(189.52e9 / 3.35e12 * 100)
    assert any("a loop extent is not a constant" in note for note in profile.notes)


def test_the_devices_name_picks_its_peaks_and_without_one_a_note_names_whose_peaks_were_used(gemm_record):
    on_h200 = summarize(details_frame(), gemm_record.estimate, "sm_90", "NVIDIA H200")
    unnamed = summarize(details_frame(), gemm_record.estimate, "sm_90")

    assert on_h200.kernels[0].roofline.peaks.device == "H200 SXM"
    assert unnamed.kernels[0].roofline.peaks.device == "H100 SXM" and any("H100 SXM" in note for note in unnamed.notes)


def test_an_fp8_kernels_flops_are_held_to_the_named_devices_fp8_peak(gemm_record):
    fp8 = replace(gemm_record.estimate, operand_dtypes=("float8_e4m3fn",))

    (kernel,) = summarize(details_frame(), fp8, "sm_90", "NVIDIA H200").kernels

    assert kernel.roofline.peaks.device == "H200 SXM" and kernel.roofline.peaks.flops_per_s == 1979e12
    assert "FP8 tensor core dense" in kernel.roofline.peaks.source


def test_a_report_printed_to_stdout_reads_its_duration_in_nanoseconds_and_lacks_dram_bytes():
    profile = summarize(parse_ncu_csv((DATA / "ncu_gemm_h100_stdout.csv").read_text()), None, "sm_90", H100)

    (kernel,) = profile.kernels
    assert kernel.duration_s == pytest.approx(22.4e-6)  # "Duration","ns","22,400"
    assert kernel.dram_bytes_per_s is None and kernel.roofline.bytes_percent is None
    assert kernel.registers_per_thread is None and kernel.block_limits == {}  # no Launch/Occupancy sections


def test_advice_comes_largest_estimated_speedup_first(summary):
    advice = summary.kernels[0].advice

    assert [item.rule for item in advice] == ["TheoreticalOccupancy", "LaunchConfiguration", "SOLBottleneck"]
    assert [item.estimated_speedup for item in advice] == [87.5, 51.52, None]
    assert advice[1].kind == "OPT" and "64 blocks" in advice[1].description


def test_the_estimate_gives_no_flops_when_ncu_profiled_several_kernels(gemm_record):
    text = (DATA / "ncu_gemm_h100_details.csv").read_text()
    rows = [line for line in text.splitlines() if line.startswith('"0",')]
    second = "\n".join(row.replace('"0",', '"1",', 1).replace('"gemm_kernel"', '"gemm_kernel_1"') for row in rows)

    profile = summarize(parse_ncu_csv(f"{text}\n{second}\n"), gemm_record.estimate, "sm_90", H100)

    assert [kernel.kernel for kernel in profile.kernels] == ["gemm_kernel", "gemm_kernel_1"]
    assert all(kernel.roofline.achieved_flops_per_s is None for kernel in profile.kernels)
    assert [len(kernel.advice) for kernel in profile.kernels] == [3, 3]
    assert any("several" in note for note in profile.notes)


# -- records -----------------------------------------------------------------------------------
def test_a_record_with_a_profile_survives_a_json_round_trip(gemm_record, summary):
    record = gemm_record.with_profile(summary)

    loaded = KernelRecord.from_json(record.to_json())

    assert loaded == record and loaded.id == gemm_record.id
    assert isinstance(loaded.profile, ProfileRecord) and loaded.profile == summary
    assert loaded.profile.kernels[0].roofline.flops_percent == pytest.approx(summary.kernels[0].roofline.flops_percent)


def test_a_record_file_written_before_profiles_loads_without_one(gemm_record):
    payload = json.loads(gemm_record.to_json())
    del payload["record"]["profile"]

    loaded = KernelRecord.from_json(json.dumps(payload))

    assert loaded.profile is None and loaded.estimate == gemm_record.estimate


def test_a_format_6_profile_with_flat_peaks_loads_with_the_same_roofline_position(gemm_record, summary):
    payload = json.loads(gemm_record.with_profile(summary).to_json())
    kernel = payload["record"]["profile"]["kernels"][0]
    kernel["roofline"] = with_flat_peaks(kernel["roofline"])
    payload["format"] = 6

    loaded = KernelRecord.from_json(json.dumps(payload)).profile.kernels[0].roofline

    assert loaded == summary.kernels[0].roofline and loaded.peaks.device == "H100 SXM"
    assert loaded.flops_percent == pytest.approx(summary.kernels[0].roofline.flops_percent)


# -- the view ----------------------------------------------------------------------------------
def test_the_profile_view_shows_bars_the_roofline_point_occupancy_launch_and_advice(summary):
    tree = parse(profile_html(summary))

    assert len(tree.find_all(data_tilelab="sol-bar")) == 5
    (point,) = [point for chart in charts(tree) for point in chart.find_all("circle", data_tilelab="roofline-point")]
    assert "TFLOP/s" in point.all_text()
    (tip,) = tree.find_all("div", **{"class": "tl-chart-tip"})  # an image shows no SVG title: the point's hover box
    assert tip.attrs["title"] == point.all_text() == "96.7 TFLOP/s at 510 FLOP/byte"
    roofline_text = tree.find_all(data_tilelab="roofline")[0].all_text()
    assert "96.7 TFLOP/s" in roofline_text and "9.77 % of peak" in roofline_text and "5.66 % of peak" in roofline_text
    text = tree.all_text()
    assert "6.25 % / 12.5 %" in text and "limited by Registers and Shared Mem" in text and "230 per thread" in text
    assert [item.all_text().split()[0] for item in tree.find_all(data_tilelab="advice")] == [
        "TheoreticalOccupancy",
        "LaunchConfiguration",
        "SOLBottleneck",
    ]


def test_without_flops_the_view_has_numbers_but_no_plot():
    markup = profile_html(summarize(details_frame(), None, "sm_90", H100))

    assert "roofline-point" not in markup and "189.5 GB/s" in markup


def test_hostile_kernel_names_and_advice_show_as_text(summary):
    line = " ".join(HOSTILE)
    quoted = line.replace('"', '""')  # as ncu's CSV quotes it
    text = (DATA / "ncu_gemm_h100_details.csv").read_text().replace("gemm_kernel", f"gemm{quoted}")
    text = text.replace("This kernel grid is too small", f"{quoted} too small")

    markup = profile_html(summarize(parse_ncu_csv(text), None, "sm_90", line))

    parse(markup)
    assert_inert(markup, *HOSTILE)


# -- the Explorer ------------------------------------------------------------------------------
def test_the_explorer_has_a_profile_tab_only_when_the_record_has_a_profile(summary):
    plain = ExplorerView(sample_record())
    profiled = ExplorerView(sample_record().with_profile(summary))

    assert [tab["title"] for tab in plain.core.tabs] == list(TABS)
    assert [tab["title"] for tab in profiled.core.tabs] == [*TABS, PROFILE_TAB]
    profiled.select(PROFILE_TAB)
    assert profiled.core.tab == "profile"
    with pytest.raises(ValueError, match="Machine code"):
        plain.select(PROFILE_TAB)


def test_the_profile_tab_is_answered_from_the_kernel_and_the_snapshot_has_its_section(summary):
    record = sample_record().with_profile(summary)
    core = ExplorerView(record).core

    reply = core.answer({"id": 3, "type": "profile"})

    assert reply["id"] == 3 and reply["kernels"][0]["head"] == "gemm_kernel"
    assert "data-section='profile'" in explorer_html(record)
    assert "data-section='profile'" not in explorer_html(sample_record())
    assert "cannot answer" in ExplorerView(sample_record()).core.answer({"id": 4, "type": "profile"})["error"]


def test_a_profile_attached_while_machine_code_is_built_keeps_both(ip, summary):
    ip.run_cell_magic("tilelang", "--arch sm_90 --force --no-show", gemm_cell())
    record = ip.user_ns["matmul_record"]
    magics = ip.magics_manager.registry["TileLangMagics"]

    magics._update(record, lambda newest: newest.with_profile(summary), "no cached cell")
    deadline = time.monotonic() + 300
    while default_registry().get(record.id).machine_code is None and time.monotonic() < deadline:
        time.sleep(0.2)

    newest = default_registry().get(record.id)
    assert newest.machine_code is not None and newest.profile == summary
    assert ip.user_ns["matmul_record"] is newest
