"""Machine code without a GPU: nvcc/ptxas/nvdisasm on TileLang's generated CUDA, and the Machine code tab's HTML."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from htmlcheck import parse
from kernels import matmul
from sample_records import EVIL, sample_record

import tilelab
from tilelab.machine.build import (
    build,
    cubin_resource_usage,
    find_tool,
    machine_code,
    machine_code_for,
    start_machine_code,
)
from tilelab.machine.record import machine_warnings
from tilelab.records import (
    CellLink,
    CodeLineLink,
    FoundThrough,
    KernelResources,
    MachineCodeRecord,
    OccupancyRecord,
    SourceMap,
)
from tilelab.views.machine.data import hot_lines, machine_data, machine_texts
from tilelab.views.machine.snapshot import machine_snapshot

pytestmark = pytest.mark.skipif(find_tool("nvcc") is None, reason="needs nvcc")

TINY = 'extern "C" __global__ void __launch_bounds__(64) add_one(float* x) { x[threadIdx.x] += 1.0f; }\n'


@pytest.fixture(scope="module")
def hopper():
    record = tilelab.explore(matmul, arch="sm_90")
    return record, machine_code_for(record)


@pytest.fixture(scope="module")
def ampere():
    record = tilelab.explore(matmul, arch="sm_80")
    return record, machine_code_for(record)


def machine_code_html(record) -> str:
    return machine_snapshot(machine_data(record), machine_texts(record))


def sass_lines_with(machine: MachineCodeRecord, opcode: str) -> list[int]:
    return [n for n, line in enumerate(machine.sass.splitlines(), start=1) if f" {opcode}." in line]


def test_the_quickstart_gemm_for_sm_90a_runs_on_warpgroup_tensor_cores(hopper):
    _, machine = hopper

    assert machine.available and machine.compile_arch == "sm_90a"
    assert "HGMMA." in machine.sass and machine.instruction_counts["gemm_kernel"]["HGMMA"] > 0
    assert machine.instruction_counts["gemm_kernel"]["UTMALDG"] > 0  # TMA loads
    resources = machine.resources["gemm_kernel"]
    assert resources.registers > 0 and resources.dynamic_shared_bytes == 49152 and resources.threads_per_block == 256
    assert machine.occupancy["gemm_kernel"].launchable


def test_the_quickstart_gemm_for_sm_80_uses_mma_sync_and_cp_async(ampere):
    _, machine = ampere

    counts = machine.instruction_counts["gemm_kernel"]
    assert counts["HMMA"] > 0 and counts["LDGSTS"] > 0 and "HGMMA" not in counts
    assert machine.resources["gemm_kernel"].registers > 0


def test_the_mma_sass_lines_link_to_the_cuda_lines_that_call_the_mma(hopper, ampere):
    # ptxas schedules some tensor-core instructions among the loop's other lines: most, not all, link to the call.
    for (record, machine), opcode, call in ((hopper, "HGMMA", "wgmma"), (ampere, "HMMA", "mma_sync")):
        device = record.source.device.splitlines()
        linked = [machine.cuda_line_for(line) for line in sass_lines_with(machine, opcode)]
        assert linked and None not in linked
        at_call = [line for line in linked if call in device[line - 1]]
        assert len(at_call) > len(linked) / 2, (opcode, linked)


def test_ptx_lines_link_to_cuda_lines_through_inlined_calls(hopper):
    record, machine = hopper
    device, ptx = record.source.device.splitlines(), machine.ptx.splitlines()

    mma = [link for link in machine.ptx_links if "wgmma.mma_async" in ptx[link.line - 1]]

    assert mma and all("wgmma" in device[link.cuda_line - 1] for link in mma)


def test_a_256x256x64_four_stage_gemm_cannot_launch_and_says_how_much_shared_memory():
    record = tilelab.explore(matmul, block_M=256, block_N=256, block_K=64, num_stages=4, threads=256, arch="sm_90")

    machine = machine_code_for(record)

    assert not machine.launchable and machine.summary()["launchable"] is False
    (reason,) = machine.launch_reasons
    assert reason.startswith("gemm_kernel: ") and "262144 B" in reason and "232448 B (227 KiB)" in reason


def test_ptxas_numbers_match_cuobjdump_resource_usage(ampere, tmp_path):
    record, _ = ampere
    from tilelab.machine.text import parse_ptxas

    built = build(record.source.device, "sm_80", tmp_path)

    ptxas = parse_ptxas(built.ptxas_log)["gemm_kernel"]
    elf = cubin_resource_usage(built.cubin)["gemm_kernel"]
    assert ptxas["registers"] == elf["REG"] > 0
    assert ptxas["stack_frame"] == elf["STACK"]
    assert ptxas.get("shared_bytes", 0) == elf["SHARED"]
    assert ptxas["constant_bytes"] == elf["CONSTANT[0]"]


def test_the_record_round_trips_through_json(hopper):
    _, machine = hopper

    data = json.loads(json.dumps(machine.to_dict()))

    assert set(data) >= {"ptx", "sass", "resources", "occupancy", "instruction_counts", "sass_links"}
    assert data["resources"]["gemm_kernel"]["registers"] == machine.resources["gemm_kernel"].registers
    assert MachineCodeRecord.from_dict(data) == machine


def test_threads_default_to_the_launch_bounds_and_the_build_runs_in_the_background():
    machine = start_machine_code(TINY, "sm_80", dynamic_shared_bytes={"add_one": 128}).result(timeout=300)

    resources = machine.resources["add_one"]
    assert resources.threads_per_block == 64 and resources.dynamic_shared_bytes == 128
    assert machine.instruction_counts["add_one"]["LDG"] == 1 and machine.tools["nvcc"]


def test_a_records_single_launch_applies_to_its_kernel_whatever_its_name():
    record = sample_record(arch="sm_80")  # one launch: 128 threads, 49152 B dynamic shared memory
    record = replace(record, source=replace(record.source, device=TINY))

    machine = start_machine_code(record).result(timeout=300)

    assert machine.resources["add_one"].threads_per_block == 128
    assert machine.resources["add_one"].dynamic_shared_bytes == 49152


def test_each_kernel_of_a_two_kernel_source_has_its_own_resources_and_counts():
    source = TINY + 'extern "C" __global__ void scale(float* x, float s) { x[blockIdx.x * 256 + threadIdx.x] *= s; }\n'

    machine = machine_code(source, "sm_86", threads_per_block={"scale": 256})

    assert set(machine.resources) == set(machine.instruction_counts) == {"add_one", "scale"}
    assert machine.occupancy["add_one"].threads_per_block == 64 and machine.occupancy["scale"].threads_per_block == 256
    assert machine.instruction_counts["scale"]["FMUL"] == 1


def test_a_compile_error_is_recorded_not_raised():
    machine = machine_code(TINY.replace("+= 1.0f", "+= undefined_name"), "sm_80")

    assert not machine.available and "undefined_name" in machine.error
    assert machine_warnings(machine)[0].startswith("machine code: the build failed")


def test_without_nvcc_the_record_names_what_to_install(monkeypatch):
    monkeypatch.setattr("tilelab.machine.build.find_tool", lambda name: None)

    machine = machine_code(TINY, "sm_90")

    assert not machine.available and machine.error is None
    assert "nvidia-cuda-nvcc" in machine.notes[0] and "CUDA toolkit" in machine.notes[0]


@pytest.mark.parametrize("setting", ["0", "off"])
def test_tilelab_machine_code_0_builds_nothing_and_the_tab_says_how_to_turn_it_back_on(monkeypatch, setting):
    monkeypatch.setenv("TILELAB_MACHINE_CODE", setting)
    monkeypatch.setattr("tilelab.machine.build._run", lambda *args, **kwargs: pytest.fail("nvcc ran"))

    machine = start_machine_code(TINY, "sm_90").result(timeout=60)

    assert not machine.available and machine.error is None and not machine.resources
    assert machine.compile_arch == "sm_90a" and machine.notes[0].startswith("machine code is off (TILELAB_MACHINE_CODE=0)")
    shown = parse(machine_code_html(replace(sample_record(), machine_code=machine))).all_text()
    assert "unset TILELAB_MACHINE_CODE to see PTX, SASS" in shown


def test_the_machine_code_tab_shows_a_resource_card_classes_and_linked_sass(hopper):
    record, machine = hopper

    tree = parse(machine_code_html(record.with_machine_code(machine)))

    (card,) = tree.find_all("div", data_tilelab="resource-card")
    assert "of 255" in card.all_text() and "theoretical occupancy" in card.all_text()
    assert "tensor core (warpgroup)" in tree.find_all("table", data_tilelab="instruction-classes")[0].all_text()
    (sass,) = tree.find_all("pre", data_tilelab="sass")
    assert "→" in sass.all_text() and not tree.find_all("script")
    to_cell = record.source.source_map.cuda_to_cell
    assert hot_lines(record.with_machine_code(machine), "gemm_kernel", to_cell)[0]["instructions"] > 0


def spilling_record(kernel: str) -> MachineCodeRecord:
    resources = KernelResources(kernel, 255, spill_stores=768, spill_loads=628, stack_frame=512, threads_per_block=384)
    occupancy = OccupancyRecord("sm_90", 384, 12, 0, 0, 64, 0.0, "shared memory", launchable=False, reasons=(EVIL,))
    return MachineCodeRecord(
        arch="sm_90",
        compile_arch="sm_90a",
        sass=f"        /*0000*/                   LDL R1, [R2] ;  // {EVIL}\n",
        resources={kernel: resources},
        occupancy={kernel: occupancy},
        instruction_counts={kernel: {"LDL": 1}},
        sass_links=(CodeLineLink(1, 3),),
        notes=(EVIL,),
    )


def test_spills_and_launch_problems_are_warnings_and_every_string_is_escaped():
    machine = spilling_record(EVIL)

    markup = machine_code_html(sample_record().with_machine_code(machine))

    tree = parse(markup)
    assert "<img" not in markup and "</script><img" not in markup
    warnings = machine_warnings(machine)
    assert any("spills registers: 768 B stored and 628 B loaded" in w for w in warnings)
    assert any(w.startswith("cannot launch on sm_90") for w in warnings)
    assert tree.find_all("div", data_tilelab="cannot-launch")
    assert "local memory (spills)" in tree.find_all("table", data_tilelab="instruction-classes")[0].all_text()


def test_the_cuda_lines_with_the_most_sass_name_the_cell_line_their_source_map_gives_and_keep_hostile_code_inert():
    record = sample_record()
    device = record.source.device.replace("__syncthreads();", f"__syncthreads();  // {EVIL}")
    cell_line = record.source.kernel_source.splitlines().index(f"# {EVIL}") + 1
    source_map = SourceMap(links=(CellLink(5, cell_line, FoundThrough.BLOCK),))
    source = replace(record.source, device=device, source_map=source_map)
    sass = "".join(f"        /*{n:04x}*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;\n" for n in range(3))
    machine = replace(spilling_record("kernel"), sass=sass, sass_links=tuple(CodeLineLink(n, 5) for n in (1, 2, 3)))

    (kernel,) = machine_data(replace(record, source=source).with_machine_code(machine))["kernels"]
    markup = machine_code_html(replace(record, source=source).with_machine_code(machine))

    (line,) = kernel["hot_lines"]
    assert (line["cuda_line"], line["cell_line"], line["instructions"]) == (5, cell_line, 3)
    assert line["cell_code"] == f"# {EVIL}" and line["classes"] == [["barriers and sync", 3, "#9a6700"]]
    (table,) = parse(markup).find_all("table", data_tilelab="hot-lines")
    assert f"{cell_line}: # {EVIL}" in table.all_text() and "<img" not in markup
