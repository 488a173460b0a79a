"""The Explorer's live Machine code tab, answered from real records: the quickstart GEMM lowered for sm_90a and built by nvcc."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from htmlcheck import parse
from kernels import matmul, two_kernels
from sample_records import EVIL

import tilelab
from tilelab.machine.build import find_tool, machine_code, machine_code_for
from tilelab.machine.text import opcode_of
from tilelab.records import CodeLineLink, KernelResources, MachineCodeRecord, OccupancyRecord
from tilelab.registry import default_registry
from tilelab.views.explorer import TABS, ExplorerView
from tilelab.views.machine.data import MAX_LIVE_LINES
from tilelab.views.source.data import source_data

pytestmark = pytest.mark.skipif(find_tool("nvcc") is None, reason="needs nvcc")


@pytest.fixture(scope="module")
def gemm():
    return tilelab.explore(matmul, arch="sm_90")


def ask(view: ExplorerView, kind: str, **content) -> dict:
    reply = view.core.answer({"id": 1, "type": kind, **content})
    assert "error" not in reply, reply["error"]
    return reply


def card_value(kernel: dict, label: str) -> str:
    return next(value for name, value, _ in kernel["card"]["rows"] if name == label)


def test_the_machine_code_tab_comes_last_and_asks_for_its_own_data(gemm):
    view = ExplorerView(gemm)

    tab = view.core.tabs[-1]

    assert TABS[-1] == "Machine code" and tab == {
        "id": "machine",
        "title": "Machine code",
        "kind": "machine",
        "request": "machine",
    }
    view.select("Machine code")
    assert view.core.tab == "machine"


def test_the_sm90_gemm_shows_its_resources_against_hoppers_limits_and_its_hgmma_count(gemm):
    reply = ask(ExplorerView(gemm), "machine")

    assert (
        reply["state"] == "ready" and reply["head"] == "sm_90 (built as sm_90a)" and reply["codes"] == ["sass", "ptx"]
    )
    (kernel,) = reply["kernels"]
    assert kernel["name"] == "gemm_kernel"
    assert card_value(kernel, "registers per thread").endswith(" of 255")
    shared = card_value(kernel, "shared memory per block")  # the total against the limit first, in KiB too
    assert shared.endswith(" of 232448 B (227 KiB): 1024 B static + 49152 B dynamic") and " KiB) of " in shared
    assert card_value(kernel, "warps per SM").endswith(" of 64")
    assert kernel["card"]["launchable"] and 0 < kernel["card"]["occupancy"] <= 1
    classes = {row["class"]: row for row in kernel["classes"]}
    assert ["HGMMA", gemm.machine_code.instruction_counts["gemm_kernel"]["HGMMA"]] in classes[
        "tensor core (warpgroup)"
    ]["opcodes"]
    assert classes["TMA / bulk copy"]["opcodes"][0][0] == "UTMALDG"
    assert sum(row["count"] for row in kernel["classes"]) == kernel["instructions"]


def test_a_hgmma_sass_line_links_to_the_wgmma_cuda_line_and_through_it_to_t_gemm(gemm):
    reply = ask(ExplorerView(gemm), "machine_code", kernel="gemm_kernel", code="sass")

    cuda, sass = (pane["text"].splitlines() for pane in reply["panes"])
    assert [opcode_of(line) for line in sass] == [opcode_of(line) for line in gemm.machine_code.sass.splitlines()]
    to_cuda = {right: left for right, left, _how in reply["links"]}
    hgmma = [n for n, line in enumerate(sass, start=1) if " HGMMA." in line]
    linked = [to_cuda[n] for n in hgmma if n in to_cuda]
    assert hgmma and len(linked) > len(hgmma) / 2
    at_wgmma = [line for line in linked if "wgmma" in cuda[line - 1]]
    assert at_wgmma
    assert (
        reply["ops"][str(at_wgmma[0])]
        == f"cell line {cell_line_of(gemm, 'T.gemm(')}: T.gemm(A_shared, B_shared, C_local)"
    )
    assert reply["how"] == {"sass": "nvdisasm's line table (nvcc -lineinfo)"} and reply["unlinked_right"]


def test_the_cuda_lines_with_the_most_sass_name_the_cell_lines_the_source_tab_links_them_to(gemm):
    (kernel,) = ask(ExplorerView(gemm), "machine")["kernels"]

    hot = kernel["hot_lines"]

    source_tab = {cuda: cell for cuda, cell, _how in source_data(gemm)["links"]}
    counts = [line["instructions"] for line in hot]
    assert len(hot) == 12 and counts == sorted(counts, reverse=True)
    assert all(line["cell_line"] == source_tab.get(line["cuda_line"]) for line in hot)
    # TileLang's own #line directives put the TMA loads at `def gemm`; the source map puts them at their T.copy.
    named = {line["cell_code"].split("(")[0] for line in hot if line["cell_line"] is not None}
    assert "T.copy" in named and not any(code.startswith("def ") for code in named)


def cell_line_of(record, text: str) -> int:
    return next(n for n, line in enumerate(record.source.kernel_source.splitlines(), start=1) if text in line)


def test_the_ptx_pane_links_wgmma_mma_async_to_the_same_cuda_call(gemm):
    reply = ask(ExplorerView(gemm), "machine_code", kernel="gemm_kernel", code="ptx")

    cuda, ptx = (pane["text"].splitlines() for pane in reply["panes"])
    mma = [left for right, left, _how in reply["links"] if "wgmma.mma_async" in ptx[right - 1]]

    assert reply["panes"][1]["language"] == "ptx" and mma
    assert all("wgmma" in cuda[line - 1] for line in mma)


def test_the_machine_code_travels_on_request_never_in_the_widgets_synced_state(gemm):
    view = ExplorerView(gemm)

    synced = len(json.dumps({k: v for k, v in view.core.get_state().items() if k not in ("_esm", "_css")}))
    sass_reply = json.dumps(ask(view, "machine_code", kernel="gemm_kernel", code="sass"))

    assert gemm.machine_code.sass.splitlines()[20] not in json.dumps(view.core.get_state(), default=str)
    assert synced < 20_000, synced
    assert len(sass_reply) < 400_000  # SASS and CUDA of one kernel, each under MAX_LIVE_LINES


@pytest.mark.slow
def test_the_saved_sm90_gemm_explorer_with_machine_code_stays_under_250_kb(gemm):
    bundle = ExplorerView(gemm)._repr_mimebundle_()

    saved = len(bundle["text/html"].encode()) + len(bundle["text/plain"].encode())

    assert saved <= 250_000, f"the saved output is {saved / 1000:.0f} kB"
    assert parse(bundle["text/html"]).find_all("pre", data_tilelab="sass")


def test_a_huge_sass_is_cut_and_the_pane_says_where_the_rest_is(gemm):
    machine = gemm.machine_code
    lines = machine.sass.splitlines()
    huge = "\n".join(lines * (MAX_LIVE_LINES // len(lines) + 2))
    record = gemm.with_machine_code(replace(machine, sass=huge))

    reply = ask(ExplorerView(record), "machine_code", kernel="gemm_kernel", code="sass")

    total = len(huge.splitlines())
    assert reply["panes"][1]["title"] == f"SASS (first {MAX_LIVE_LINES} of {total} lines)"
    assert len(reply["panes"][1]["text"].splitlines()) == MAX_LIVE_LINES
    assert "record.machine_code.sass" in reply["note"]
    assert max(right for right, _left, _how in reply["links"]) <= MAX_LIVE_LINES


def test_each_of_two_device_kernels_shows_only_its_own_sass():
    record = tilelab.explore(two_kernels, arch="sm_90")
    view = ExplorerView(record)

    names = [kernel["name"] for kernel in ask(view, "machine")["kernels"]]
    panes = {name: ask(view, "machine_code", kernel=name, code="sass") for name in names}

    assert sorted(names) == ["main_kernel", "main_kernel_1"]
    for name, reply in panes.items():
        sass = reply["panes"][1]["text"]
        other = next(n for n in names if n != name)
        assert f".text.{name}:" in sass and f".text.{other}:" not in sass
        assert f"SASS {name} (" in reply["panes"][1]["title"]
        assert all(0 < right <= len(sass.splitlines()) for right, _left, _how in reply["links"])
    kernels = ask(view, "machine")["kernels"]
    hot = {kernel["name"]: {line["cuda_line"] for line in kernel["hot_lines"]} for kernel in kernels}
    for name, reply in panes.items():
        assert hot[name] and hot[name] <= {left for _right, left, _how in reply["links"]}  # its own CUDA lines only


def test_the_tab_and_the_snapshot_say_the_build_is_pending_then_fill_in_when_the_record_is_replaced():
    record = default_registry().add(tilelab.explore(matmul, arch="sm_90", machine_code=False))
    view = ExplorerView(record)
    _ = view.widget

    pending, snapshot = ask(view, "machine"), view.to_html()
    default_registry().add(record.with_machine_code(machine_code_for(record)))  # what the magic's background build does

    assert pending["state"] == "pending" and "background" in pending["message"] and "\n" not in pending["message"]
    assert view.core.machine_updates == 1
    assert ask(view, "machine")["state"] == "ready"
    assert "data-section='machine'" not in snapshot and "data-section='machine'" in view.to_html()  # what a save keeps


def test_without_nvcc_the_tab_says_so_in_one_line(gemm, monkeypatch):
    monkeypatch.setattr("tilelab.machine.build.find_tool", lambda name: None)
    record = gemm.with_machine_code(machine_code(gemm.source.device, "sm_90"))

    reply = ask(ExplorerView(record), "machine")

    assert reply["state"] == "none" and "nvidia-cuda-nvcc" in reply["message"] and "\n" not in reply["message"]


def test_a_failed_build_gives_its_first_line_and_a_bounded_log(gemm):
    broken = gemm.source.device.replace("gemm_kernel(", "gemm_kernel(undefined_type x, ", 1)
    record = gemm.with_machine_code(machine_code(broken, "sm_90"))

    reply = ask(ExplorerView(record), "machine")

    assert reply["state"] == "failed"
    assert reply["message"] == (
        'nvcc could not build this kernel\'s machine code: kernel.cu(21): error: identifier "undefined_type" is undefined'
    )
    assert "undefined_type" in reply["log"] and len(reply["log"]) <= 8_000


def test_spills_and_launch_problems_reach_the_card_as_plain_text(gemm):
    resources = KernelResources(EVIL, 255, spill_stores=768, spill_loads=628, stack_frame=512, threads_per_block=384)
    occupancy = OccupancyRecord("sm_90", 384, 12, 0, 0, 64, 0.0, "shared memory", launchable=False, reasons=(EVIL,))
    machine = MachineCodeRecord(
        arch="sm_90",
        sass=f"        /*0000*/                   LDL R1, [R2] ;  // {EVIL}\n",
        resources={EVIL: resources},
        occupancy={EVIL: occupancy},
        instruction_counts={EVIL: {"LDL": 1}},
        sass_links=(CodeLineLink(1, 3),),
        notes=(EVIL,),
    )
    view = ExplorerView(gemm.with_machine_code(machine))

    (kernel,) = ask(view, "machine")["kernels"]
    sass = ask(view, "machine_code", kernel=EVIL, code="sass")

    assert kernel["name"] == EVIL and kernel["card"]["reasons"] == [EVIL] and not kernel["card"]["launchable"]
    assert ["spills per thread", "768 B stored, 628 B loaded", "bad"] in kernel["card"]["rows"]
    assert kernel["classes"][0]["class"] == "local memory (spills)"
    assert EVIL in sass["panes"][1]["text"]  # CodeMirror text, never markup
