"""Where the warps were: ncu's warp-state samples of the quickstart GEMM, placed on its CUDA and cell lines.

The fixtures are one real ncu run on an H200 (ncu 2025.3.1) of the GEMM whose record tests/data keeps: its
details page and its source page (``--page source --print-source sass``). That cubin's SASS is, instruction for
instruction, the one in the record (built here by nvcc for sm_90a), so the samples land on the record's lines.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import replace
from pathlib import Path

from htmlcheck import assert_inert, parse
from tabdata import as_sent, quickstart_record

from tilelab.counters.ncu import parse_ncu_csv
from tilelab.counters.source_page import parse_ncu_source_csv
from tilelab.counters.stalls import place_samples
from tilelab.counters.summary import summarize
from tilelab.records import KernelRecord
from tilelab.source_map import source_map_of
from tilelab.views.explorer import ExplorerView
from tilelab.views.profile.data import profile_data
from tilelab.views.profile.snapshot import profile_snapshot

DATA = Path(__file__).parent / "data"
H200 = "NVIDIA H200"


def source_page() -> str:
    with gzip.open(DATA / "ncu_gemm_h200_source.csv.gz", "rt") as file:
        return file.read()


def profiled(record: KernelRecord | None = None) -> KernelRecord:
    """The quickstart GEMM (or ``record``) with the H200 profile of it: details and the source page's samples."""
    record = record or quickstart_record()
    frame = parse_ncu_csv((DATA / "ncu_gemm_h200_details.csv").read_text())
    frame.attrs["samples"] = parse_ncu_source_csv(source_page())
    return record.with_profile(summarize(frame, record.estimate, "sm_90", H200))


def samples_section(record: KernelRecord) -> dict:
    (kernel,) = profile_data(record)["kernels"]
    return next(section for section in kernel["sections"] if section["kind"] == "samples")


def test_the_source_page_gives_each_sampled_instruction_its_offset_in_the_kernel_and_its_stall_reasons():
    (name, (instructions,)), *others = parse_ncu_source_csv(source_page()).items()

    assert name == "gemm_kernel" and not others
    assert len(instructions) == 158 and sum(item.samples for item in instructions) == 703  # only sampled ones kept
    first = instructions[0]
    assert (first.offset, first.instruction, first.samples, first.reasons) == (0, "LDC R1, c[0x0][0x28]", 8, (("no_inst", 8),))
    assert all(item.offset % 16 == 0 and item.samples >= item.not_issued for item in instructions)
    assert [item.offset for item in instructions] == sorted(item.offset for item in instructions)


def test_the_profile_keeps_the_samples_through_json():
    record = profiled()

    (kernel,) = record.profile.kernels

    assert kernel.sampled == 703
    assert KernelRecord.from_json(record.to_json()).profile == record.profile


def test_the_samples_add_up_per_cell_line_on_the_lines_the_source_map_gives():
    record = profiled()
    (kernel,) = record.profile.kernels

    placed = place_samples(record, kernel)

    cell = record.source.kernel_source.splitlines()
    by_cell = {line.line: line for line in placed.by_cell_line}
    assert placed.unplaced == "" and sum(line.samples for line in placed.by_cell_line) == 703
    assert sum(line.samples for line in placed.by_cuda_line) == 703
    assert cell[15].strip() == "T.gemm(A_shared, B_shared, C_local)"
    assert by_cell[16].samples == 198 and by_cell[16].reasons[0] == ("barrier", 161)  # warpgroup_wait
    assert cell[14].strip().startswith("T.copy(B") and by_cell[15].reasons[0] == ("long_sb", 119)
    assert placed.by_cell_line[0].line == 13 and "T.Pipelined" in cell[12]  # the mbarrier waits of the pipeline
    links = source_map_of(record.source).cuda_to_cell
    assert all(placed.cell_line_of.get(line.line) == links.get(line.line) for line in placed.by_cuda_line)


def test_the_profile_tab_says_which_cell_line_the_warps_were_at_and_why_they_were_not_issuing():
    section = samples_section(profiled())

    assert section["title"] == "Where the warps were (703 samples)" and section["note"] == ""
    assert section["summary"].startswith("Cell line 13 has 29 % of the samples, 70 % of them long scoreboard: for k in T.Pipelined(")
    gemm = next(row for row in section["cell"] if row["line"] == "16")
    assert (gemm["code"], gemm["share"]) == ("T.gemm(A_shared, B_shared, C_local)", "28 %")
    assert gemm["reasons"][0][:2] == ["barrier", "81 %"] and "barrier" in gemm["reasons"][0][2]
    top = section["cuda"][0]
    assert (top["line"], top["code"], top["cell"]) == ("83", "tl::warpgroup_wait<0>();", "16: T.gemm(A_shared, B_shared, C_local)")
    assert len(section["cuda"]) == 12


def test_the_samples_on_no_cell_line_name_the_busiest_cuda_line_tilelang_wrote_for_the_kernel_as_a_whole():
    section = samples_section(profiled())

    (none,) = [row for row in section["cell"] if row["line"] == "—"]

    assert none["share"] == "9 %" and none["reasons"][0][0] == "drain"  # the producer warps, done, draining
    assert none["code"].startswith("no cell line · its busiest CUDA line, 44: tl::warpgroup_reg_dealloc<24>();")


def test_the_samples_of_a_warp_specialised_kernel_say_whose_warps_they_were():
    record = profiled()
    placed = place_samples(record, record.profile.kernels[0])
    section = samples_section(record)

    by_cell = {line.line: line for line in placed.by_cell_line}
    # waiting for a free stage, for data; and all warps, at the pipeline's barrier set-up before the split
    assert by_cell[13].by_role == (("producer", 110), ("consumer", 95), ("all", 2))
    assert by_cell[16].by_role == (("consumer", 198),) and by_cell[15].by_role == (("producer", 127),)
    rows = {row["line"]: row for row in section["cell"]}
    assert section["warps"] and "warp-specialised" in section["about"]
    assert rows["13"]["warps"] == ["producer 53 %", "consumer 46 %", "all 1 %"] and rows["16"]["warps"] == ["consumer"]
    assert rows["—"]["warps"] == ["producer 69 %", "all 23 %", "consumer 8 %"]  # the producer draining after its exit
    assert {row["line"]: row["warps"] for row in section["cuda"][:2]} == {"83": ["consumer"], "53": ["producer"]}


def test_a_kernel_that_is_not_warp_specialised_has_no_warps_column():
    record = profiled()
    unsplit = replace(record.source, device=record.source.device.replace("threadIdx.x) < 128) {", "blockIdx.z) < 128) {"))
    section = samples_section(replace(record, source=unsplit))

    assert not section["warps"] and "warp-specialised" not in section["about"]
    assert all(row["warps"] == [] for row in section["cell"] + section["cuda"])
    (by_cell,) = parse(profile_snapshot(as_sent(profile_data(replace(record, source=unsplit))))).find_all(
        "table", data_tilelab="samples-by-cell-line"
    )
    assert [th.all_text() for th in by_cell.find_all("th")][-1] == "why not issuing"


def test_the_snapshot_draws_the_samples_from_the_tabs_json_and_the_widget_gets_the_same():
    record = profiled()
    data = profile_data(record)

    tree = parse(profile_snapshot(as_sent(data)))

    (by_cell,) = tree.find_all("table", data_tilelab="samples-by-cell-line")
    assert len(by_cell.find_all("tr")) == 1 + len(samples_section(record)["cell"])
    assert [th.all_text() for th in by_cell.find_all("th")][-2:] == ["why not issuing", "warps"]
    (by_cuda,) = tree.find_all("table", data_tilelab="samples-by-cuda-line")
    assert "tl::warpgroup_wait<0>();" in by_cuda.all_text() and "producer 53 %, consumer 46 %, all 1 %" in by_cell.all_text()
    assert tree.find_all(data_tilelab="samples-summary")[0].all_text().startswith("Cell line 13 has 29 % of the samples")
    reply = ExplorerView(record).core.answer({"id": 3, "type": "profile"})
    assert {key: value for key, value in reply.items() if key not in ("id", "type")} == data


def launched_twice(details: str, page: str, second_tables: int = 1) -> tuple[str, str]:
    """The fixtures as ncu writes a kernel launched twice: its rows again under ID 1, and its source page table again
    (``second_tables`` times) with every sample count doubled."""
    header, *rows = details.splitlines()
    again = [re.sub(r'^"0"', '"1"', row) for row in rows]
    doubled = re.sub(r'^("0x[0-9a-f]+","[^"]*","?)(\d+)', lambda m: m[1] + str(2 * int(m[2])), page, flags=re.M)
    return "\n".join([header, *rows, *again]), page + doubled * second_tables


def test_a_kernel_launched_twice_gets_each_launchs_own_samples():
    details, page = launched_twice((DATA / "ncu_gemm_h200_details.csv").read_text(), source_page())
    frame = parse_ncu_csv(details)
    frame.attrs["samples"] = parse_ncu_source_csv(page)

    first, second = summarize(frame, None, "sm_90", H200).kernels

    assert (first.launch, second.launch) == (0, 1)
    assert (first.sampled, second.sampled) == (703, 2 * 703)


def test_a_kernel_whose_tables_and_launches_do_not_number_the_same_gets_no_samples_and_a_note():
    details, page = launched_twice((DATA / "ncu_gemm_h200_details.csv").read_text(), source_page(), second_tables=2)
    frame = parse_ncu_csv(details)
    frame.attrs["samples"] = parse_ncu_source_csv(page)

    profile = summarize(frame, None, "sm_90", H200)

    assert [kernel.samples for kernel in profile.kernels] == [(), ()]
    assert "ncu's source page has 3 tables for the 2 launches of gemm_kernel: its warp samples are left out" in profile.notes


def test_samples_of_another_build_of_the_kernel_are_not_placed_and_the_tab_says_why():
    record = quickstart_record()
    machine = record.machine_code
    changed = re.sub(r"(/\*0000\*/\s+)LDC", r"\1MOV", machine.sass, count=1)  # ncu sampled LDC at offset 0
    record = profiled(replace(record, machine_code=replace(machine, sass=changed)))

    section = samples_section(record)

    assert section["cell"] == [] and section["cuda"] == []
    assert section["note"].startswith("the SASS ncu ran differs from the record's at 1 of 158 sampled instructions")
    assert "/*0000*/: ncu ran LDC R1, c[0x0][0x28], the record has MOV" in section["note"]


def test_before_its_machine_code_is_built_the_tab_says_the_samples_wait_for_it():
    record = profiled(replace(quickstart_record(), machine_code=None))

    section = samples_section(record)

    assert section["note"] == (
        "the record has no machine code yet (%%tilelang builds it in the background, unless --no-machine-code): "
        "the samples are not placed on lines"
    )


def test_hostile_cell_code_in_the_samples_tables_stays_inert():
    hostile = "<script>alert(1)</script><img src=x onerror=alert(1)>"
    record = quickstart_record()
    lines = record.source.kernel_source.splitlines()
    lines[15] = lines[15] + "  # " + hostile
    record = profiled(replace(record, source=replace(record.source, kernel_source="\n".join(lines))))

    markup = profile_snapshot(profile_data(record))

    gemm = next(row for row in samples_section(record)["cell"] if row["line"] == "16")
    assert hostile[:20] in gemm["code"]
    assert_inert(markup, gemm["code"])
