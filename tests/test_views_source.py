"""The Source tab: every tile op of the cell links to its CUDA, even where TileLang's #line points elsewhere."""

from __future__ import annotations

import functools

import pytest
from htmlcheck import parse
from sample_records import DEVICE, KERNEL_SOURCE, failed_record, gemm_record, sample_record

from tilelab.records import LineLink, SourceRecord
from tilelab.views._source_links import cell_ops, source_links
from tilelab.views.source import SourceData, binary_note, source_html

CELL = """import tilelang.language as T

def kernel(A, B, C):
    A_s = T.alloc_shared((64, 32), T.float16)
    B_s = T.alloc_shared((32, 64), T.float16)
    C_l = T.alloc_fragment((64, 64), T.float32)
    T.clear(C_l)
    for k in T.Pipelined(8, num_stages=2):
        T.copy(A[0, k * 32], A_s)
        T.copy(B[k * 32, 0], B_s)
        T.gemm(A_s, B_s, C_l)
    T.copy(C_l, C[0, 0])
"""

CUDA = """extern "C" __global__ void kernel(half_t* A, half_t* B, half_t* C) {
  float C_l[32];
  for (int i = 0; i < 8; ++i) {
    C_l[i] = 0.f;
  }
  for (int k = 0; k < 8; ++k) {
    tl::cp_async_gs<16>(A_s, A + k * 32);
    tl::cp_async_gs<16>(B_s, B + k * 32);
    tl::cp_async_wait<0>();
    __syncthreads();
    {
      tl::mma_sync<16, 8, 16>(C_l, A_local, B_local);
    }
  }
  C[0] = C_l[0];
}
"""

# As TileLang writes them: a directive where a span starts, inherited by every line after it.
_DIRECTIVES = {2: ("cell", 3), 3: ("cell", 7), 12: ("tilelang/mma_macro_generator.py", 591), 15: ("cell", 12)}


def _inherited(directives: dict[int, tuple[str, int]], lines: int) -> tuple[LineLink, ...]:
    links, current = [], None
    for number in range(1, lines + 1):
        current = directives.get(number, current)
        if current is not None:
            links.append(LineLink(number, *current))
    return tuple(links)


def _record() -> SourceRecord:
    return SourceRecord(CUDA, None, "cuda", _inherited(_DIRECTIVES, len(CUDA.splitlines())), "cell", CELL)


def test_the_cells_tile_ops_are_found_with_the_buffers_they_touch():
    ops = cell_ops(CELL, near={3, 7})

    assert {line: op.name for line, op in ops.items()} == {
        4: "alloc_shared", 5: "alloc_shared", 6: "alloc_fragment", 7: "clear",
        8: "Pipelined", 9: "copy", 10: "copy", 11: "gemm", 12: "copy",
    }  # fmt: skip
    assert ops[11].buffers == ("A_s", "B_s", "C_l") and ops[9].buffers == ("A", "A_s")
    assert ops[8].end == 11


def test_template_calls_link_to_the_op_that_expanded_into_them():
    links = source_links(_record())

    assert links.cuda_to_cell[12] == 11 and links.how[12] == "template"  # mma_sync: T.gemm, not TileLang's macro file
    assert links.cuda_to_cell[7] == 9 and links.cuda_to_cell[8] == 10  # each cp.async to its own T.copy
    assert links.cuda_to_cell[2] == 6 and links.how[2] == "declaration"


def test_loops_and_barriers_that_inherited_a_wrong_line_go_to_the_pipelined_loop():
    links = source_links(_record())

    assert links.cuda_to_cell[6] == 8 and links.how[6] == "pipeline"  # not T.clear, whose directive came last
    assert links.cuda_to_cell[9] == links.cuda_to_cell[10] == 8
    assert links.cuda_to_cell[11] == links.cuda_to_cell[13] == 11  # the mma block's braces go with T.gemm


def test_directives_stay_trusted_where_they_were_emitted():
    links = source_links(_record())

    assert [links.cuda_to_cell[n] for n in (3, 4, 5)] == [7, 7, 7]
    assert links.cuda_to_cell[15] == 12
    assert 1 not in links.cuda_to_cell  # the kernel's signature belongs to no op


def test_a_python_line_links_to_the_device_lines_it_generated():
    links = source_links(sample_record().source)

    assert links.cuda_lines_for(5) == [4, 5]
    assert links.cuda_lines_for(4) == [2]  # the shared buffer's declaration
    assert links.cuda_lines_for(6) == [6]


def test_the_source_reply_carries_both_texts_the_links_and_why_they_hold():
    reply = SourceData(sample_record()).panes()

    assert [pane["text"] for pane in reply["panes"]] == [KERNEL_SOURCE, DEVICE]
    assert [pane["language"] for pane in reply["panes"]] == ["python", "cuda"]
    assert [4, 5, "directive"] in reply["links"] and reply["how"]["directive"]
    assert reply["ops"]["6"] == "T.gemm" and reply["has_host"]


def test_host_code_travels_only_when_asked_for():
    data = SourceData(sample_record())

    assert "int main()" not in str(data.panes())
    assert data.host()["text"].startswith("// host")


def test_a_record_without_source_says_so():
    reply = SourceData(failed_record()).panes()

    assert reply["panes"] == [] and "stopped before code generation" in reply["note"]
    assert "not available" in binary_note(failed_record())
    assert "lowered only" in binary_note(sample_record())


def test_the_snapshot_shows_both_texts_tints_linked_lines_and_lists_the_links():
    tree = parse(f"<div>{source_html(sample_record())}</div>")

    (python,) = tree.find_all("pre", data_tilelab="python")
    (device,) = tree.find_all("pre", data_tilelab="device")
    assert "T.gemm(A_shared, B, C)" in python.all_text() and "mma(A_shared, B);" in device.all_text()
    assert len([n for n in device.find_all("span") if "background" in (n.attrs.get("style") or "")]) == 4
    (table,) = tree.find_all("table", data_tilelab="line-links")
    assert "4–5" in table.all_text()


@functools.cache
def _gemm_links(arch: str):
    record = gemm_record(arch)
    source = record.source
    cell = source.kernel_source.splitlines()
    line_of = {
        key: next(n for n, text in enumerate(cell, 1) if text.strip().startswith(key) and n > 8)
        for key in ("T.gemm", "T.clear", "for k in T.Pipelined", "T.copy(A", "T.copy(B", "def gemm")
    }
    return source, source_links(source), line_of


def _cuda(source, links, cell_line):
    lines = source.device.splitlines()
    return [lines[n - 1] for n in links.cuda_lines_for(cell_line)]


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_t_gemm_links_to_its_tensor_core_code(arch):
    source, links, line_of = _gemm_links(arch)

    gemm = _cuda(source, links, line_of["T.gemm"])

    core = "tl::wgmma_ss" if arch == "sm_90" else "tl::mma_sync"
    assert any(core in text for text in gemm)
    assert not any(core in text for text in _cuda(source, links, line_of["T.clear"]))
    assert not links.cuda_lines_for(line_of["def gemm"])


@pytest.mark.slow
def test_on_sm90_the_tma_loads_link_to_their_copies_and_the_producer_loop_to_the_pipeline():
    source, links, line_of = _gemm_links("sm_90")

    assert all("tma_load(A_desc" in t for t in _cuda(source, links, line_of["T.copy(A"]) if "tma_load" in t)
    assert any("tma_load(A_desc" in t for t in _cuda(source, links, line_of["T.copy(A"]))
    assert any("tma_load(B_desc" in t for t in _cuda(source, links, line_of["T.copy(B"]))
    pipeline = _cuda(source, links, line_of["for k in T.Pipelined"])
    assert any(t.strip().startswith("for (int k = 0;") for t in pipeline)
    assert any(".wait(" in t for t in pipeline)


@pytest.mark.slow
def test_reductions_link_to_their_all_reduce():
    from kernels import flash_attention

    import tilelab

    source = tilelab.explore(flash_attention, arch="sm_90").source
    links = source_links(source)
    cell, lines = source.kernel_source.splitlines(), source.device.splitlines()

    for op, reducer in (("T.reduce_max", "tl::MaxOp"), ("T.reduce_sum", "tl::SumOp")):
        line = next(n for n, text in enumerate(cell, 1) if text.strip().startswith(op))
        linked = [lines[n - 1] for n in links.cuda_lines_for(line)]
        assert any(reducer in text for text in linked), op
