"""The source map: every tile op of the cell links to its CUDA, even where TileLang's #line points elsewhere.

Capture computes the map once and the record keeps it; a record saved before it was kept gets it when asked.
"""

from __future__ import annotations

import functools
import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest
from sample_records import sample_record

import tilelab
from tilelab.cell_ops import cell_ops
from tilelab.records import FORMAT_VERSION, FoundThrough, KernelRecord, LineLink, SourceRecord
from tilelab.source_map import build_source_map, source_map_of, with_source_map

QUICKSTART = Path(__file__).parent / "data" / "quickstart_gemm.record.json.gz"  # saved in format 5, without a map

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


def _source() -> SourceRecord:
    return SourceRecord(CUDA, None, "cuda", _inherited(_DIRECTIVES, len(CUDA.splitlines())), "cell", CELL)


def _how(source_map) -> dict[int, FoundThrough]:
    return {link.cuda_line: link.how for link in source_map.links}


def _quickstart_text() -> str:
    with gzip.open(QUICKSTART, "rt") as file:
        return file.read()


def test_the_cells_tile_ops_are_found_with_the_buffers_they_touch():
    ops = cell_ops(CELL, near={3, 7})

    assert {line: op.name for line, op in ops.items()} == {
        4: "alloc_shared", 5: "alloc_shared", 6: "alloc_fragment", 7: "clear",
        8: "Pipelined", 9: "copy", 10: "copy", 11: "gemm", 12: "copy",
    }  # fmt: skip
    assert ops[11].buffers == ("A_s", "B_s", "C_l") and ops[9].buffers == ("A", "A_s")
    assert ops[8].end == 11


def test_the_map_names_every_tile_op_of_the_cell_by_line():
    source_map = build_source_map(_source())

    named = [(op.line, op.name) for op in source_map.ops]
    assert named[:4] == [(4, "alloc_shared"), (5, "alloc_shared"), (6, "alloc_fragment"), (7, "clear")]


def test_template_calls_link_to_the_op_that_expanded_into_them():
    source_map = build_source_map(_source())
    to_cell, how = source_map.cuda_to_cell, _how(source_map)

    assert to_cell[12] == 11 and how[12] is FoundThrough.TEMPLATE  # mma_sync: T.gemm, not TileLang's macro file
    assert to_cell[7] == 9 and to_cell[8] == 10  # each cp.async to its own T.copy
    assert to_cell[2] == 6 and how[2] is FoundThrough.DECLARATION


def test_loops_and_barriers_that_inherited_a_wrong_line_go_to_the_pipelined_loop():
    source_map = build_source_map(_source())
    to_cell = source_map.cuda_to_cell

    assert to_cell[6] == 8 and _how(source_map)[6] is FoundThrough.PIPELINE  # not T.clear, whose directive came last
    assert to_cell[9] == to_cell[10] == 8
    assert to_cell[11] == to_cell[13] == 11  # the mma block's braces go with T.gemm


def test_directives_stay_trusted_where_they_were_emitted():
    source_map = build_source_map(_source())

    assert [source_map.cell_line_for(n) for n in (3, 4, 5)] == [7, 7, 7]
    assert source_map.cell_line_for(15) == 12
    assert source_map.cell_line_for(1) is None  # the kernel's signature belongs to no op


def test_a_python_line_links_to_the_device_lines_it_generated():
    source_map = build_source_map(sample_record().source)

    assert source_map.cuda_lines_for(5) == [4, 5]
    assert source_map.cuda_lines_for(4) == [2]  # the shared buffer's declaration
    assert source_map.cuda_lines_for(6) == [6]


def test_a_record_carrying_its_map_keeps_it_through_json_and_load(tmp_path):
    record = sample_record()
    record = replace(record, source=with_source_map(record.source))
    path = tmp_path / "gemm.json"

    record.save(path)

    assert json.loads(record.to_json())["format"] == FORMAT_VERSION >= 6
    assert KernelRecord.from_json(record.to_json()).source.source_map == record.source.source_map
    assert tilelab.load(path).source.source_map == build_source_map(record.source)


def test_a_record_saved_before_the_map_was_kept_gets_the_same_map_when_asked():
    old = KernelRecord.from_json(_quickstart_text())

    assert json.loads(_quickstart_text())["format"] == 5 and old.source.source_map is None
    assert source_map_of(old.source) == build_source_map(old.source)
    assert len(source_map_of(old.source).links) > 40


def test_an_old_records_map_is_computed_once_for_every_tab_that_asks():
    old = KernelRecord.from_json(_quickstart_text()).source

    first = source_map_of(old)

    assert source_map_of(old) is first
    assert source_map_of(replace(old, kernel_source=old.kernel_source + "\n")) is not first  # another source


def test_a_stored_map_is_read_not_computed_again():
    stored = replace(build_source_map(_source()), ops=())  # marked: a fresh computation would name ops
    source = replace(_source(), source_map=stored)

    assert source_map_of(source) is stored


@functools.cache
def _gemm(arch: str):
    from sample_records import gemm_record

    source = gemm_record(arch).source
    cell = source.kernel_source.splitlines()
    line_of = {
        key: next(n for n, text in enumerate(cell, 1) if text.strip().startswith(key) and n > 8)
        for key in ("T.gemm", "T.clear", "for k in T.Pipelined", "T.copy(A", "T.copy(B", "def gemm")
    }
    return source, line_of


def _cuda(source: SourceRecord, cell_line: int) -> list[str]:
    lines = source.device.splitlines()
    return [lines[n - 1] for n in source.source_map.cuda_lines_for(cell_line)]


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_t_gemm_links_to_its_tensor_core_code(arch):
    source, line_of = _gemm(arch)

    gemm = _cuda(source, line_of["T.gemm"])

    core = "tl::wgmma_ss" if arch == "sm_90" else "tl::mma_sync"
    assert any(core in text for text in gemm)
    assert not any(core in text for text in _cuda(source, line_of["T.clear"]))
    assert not source.source_map.cuda_lines_for(line_of["def gemm"])


@pytest.mark.slow
def test_on_sm90_the_tma_loads_link_to_their_copies_and_the_producer_loop_to_the_pipeline():
    source, line_of = _gemm("sm_90")

    assert all("tma_load(A_desc" in t for t in _cuda(source, line_of["T.copy(A"]) if "tma_load" in t)
    assert any("tma_load(A_desc" in t for t in _cuda(source, line_of["T.copy(A"]))
    assert any("tma_load(B_desc" in t for t in _cuda(source, line_of["T.copy(B"]))
    pipeline = _cuda(source, line_of["for k in T.Pipelined"])
    assert any(t.strip().startswith("for (int k = 0;") for t in pipeline)
    assert any(".wait(" in t for t in pipeline)


@pytest.mark.slow
def test_on_sm90_the_pipelines_barrier_set_up_links_to_the_pipelined_loop_and_the_warp_branches_to_no_line():
    source, line_of = _gemm("sm_90")
    pipeline = [text.strip() for text in _cuda(source, line_of["for k in T.Pipelined"])]
    linked = {text.strip() for number, text in enumerate(source.device.splitlines(), 1) if number in source.source_map.cuda_to_cell}

    assert any(text.startswith("__shared__") and "mbarrier_mem[" in text for text in pipeline)
    assert any(text.startswith("mbarrier[0].init(") for text in pipeline) and "tl::fence_barrier_init();" in pipeline
    assert not any("prefetch_tma_descriptor" in text for text in pipeline)  # the copies' own
    # The producer's and consumer's branches are the kernel's as a whole: their warps drain there after their exit.
    assert not any(text.startswith(("if (((int)threadIdx.x) < ", "tl::warpgroup_reg_")) for text in linked)


BARRIERS_CUDA = """extern "C" __global__ void kernel(half_t* A, half_t* B) {
  __shared__ __align__(16) uint64_t mbarrier_mem[2];
  auto mbarrier = reinterpret_cast<Barrier*>(mbarrier_mem);
  if (tl::tl_shuffle_elect<0>()) {
    mbarrier[0].init(1);
    mbarrier[1].init(128);
  }
  tl::fence_barrier_init();
}
"""
ONE_PIPELINE = """
    for k in T.Pipelined(4, num_stages=2):
        T.copy(A[k * 64], A_s)
"""


@pytest.mark.parametrize("loops", [1, 2])
def test_barrier_set_up_links_to_the_pipelined_loop_only_where_the_kernel_has_one(loops):
    cell = "import tilelang.language as T\n\ndef kernel(A, B):\n    A_s = T.alloc_shared((64,), T.float16)" + ONE_PIPELINE * loops
    links = _inherited({1: ("cell", 3)}, len(BARRIERS_CUDA.splitlines()))  # the def's directive, untrusted
    source_map = build_source_map(SourceRecord(BARRIERS_CUDA, None, "cuda", links, "cell", cell))

    to_cell = {link.cuda_line: (link.cell_line, link.how) for link in source_map.links}
    pipelined = cell.splitlines().index("    for k in T.Pipelined(4, num_stages=2):") + 1
    if loops == 1:
        assert all(to_cell[n] == (pipelined, FoundThrough.PIPELINE) for n in (2, 3, 4, 5, 6, 7, 8))
    else:  # which pipeline's barriers they are, the CUDA does not say
        assert not set(to_cell) & {2, 3, 4, 5, 6, 7, 8}


@pytest.mark.slow
def test_reductions_link_to_their_all_reduce_and_a_max_into_kept_values_to_its_scratch_buffer():
    from kernels import flash_attention

    source = tilelab.explore(flash_attention, arch="sm_90").source

    for op, reducer in (("T.reduce_max", "tl::MaxOp"), ("T.reduce_sum", "tl::SumOp")):
        assert any(reducer in text for text in _linked(source, op)), op
    # clear=False: TileLang reduces into a buffer of its own, scores_max_clear, then takes the max with scores_max.
    assert "float scores_max_clear[2];" in _linked(source, "T.reduce_max(acc_s, scores_max, dim=1, clear=False)")


PAIR_CELL = """import tilelang.language as T

def kernel(A, count):
    pair = T.alloc_local((2,), "uint8")
    T.clear(pair)
    if count == 0:
        pair[0], pair[1] = 0, 1
"""
PAIR_CUDA = """extern "C" __global__ void kernel(uchar* A, int count) {
  uchar pair[2];
  pair[0] = (uchar)0;
  pair[1] = (uchar)0;
  if (count == 0) {
    pair[0] = (uchar)0;
  }
  if (count == 0) {
    pair[1] = (uchar)1;
  }
}
"""


def test_a_constant_the_cell_stores_itself_keeps_its_line_and_only_an_unclaimed_fill_goes_to_t_clear():
    # TileLang's #line: the kernel's def for the set-up and the fill (untrusted), then the cell's store, inherited.
    links = _inherited({1: ("cell", 3), 5: ("cell", 7)}, len(PAIR_CUDA.splitlines()))
    source_map = build_source_map(SourceRecord(PAIR_CUDA, None, "cuda", links, "cell", PAIR_CELL))

    to_cell = {link.cuda_line: link.cell_line for link in source_map.links}
    assert to_cell[3] == to_cell[4] == 5  # the fill: T.clear(pair), though its #line named the def
    assert to_cell[6] == 7  # the cell's own store
    assert to_cell.get(9) != 5  # nor is its second store T.clear's, though its #line (the first store's) is inherited


SCALE_CELL = """import tilelang.language as T

def kernel(X, Y, Z, scale):
    x = T.alloc_fragment((64,), "float32")
    y = T.alloc_fragment((64,), "float32")
    T.copy(X, x)
    T.copy(Y, y)
    for i in T.Parallel(64):
        x[i] = x[i] * scale
        y[i] = y[i] + x[i]
    T.copy(x, Z)
"""
SCALE_CUDA = """extern "C" __global__ void kernel(float* X, float* Y, float* Z, float scale) {
  float x[2];
  float y[2];
  for (int i = 0; i < 2; ++i) {
    x[i] = (x[i] * scale);
    y[i] = (y[i] + x[i]);
  }
}
"""


def test_a_statement_that_tilelang_gives_to_a_t_parallel_loop_links_to_the_body_line_naming_its_buffers():
    # TileLang's #line: the T.Parallel line for the whole fused loop, its body included.
    links = _inherited({4: ("cell", 8), 7: ("cell", 8)}, len(SCALE_CUDA.splitlines()))
    source_map = build_source_map(SourceRecord(SCALE_CUDA, None, "cuda", links, "cell", SCALE_CELL))

    to_cell = {link.cuda_line: link.cell_line for link in source_map.links}
    assert to_cell[4] == to_cell[7] == 8  # the loop and its brace stay with T.Parallel
    assert to_cell[6] == 10  # only y[i] = y[i] + x[i] names both x and y
    assert to_cell[5] == 9  # both body lines name x; x[i] = x[i] * scale is the one storing into it


SELECT_CELL = """import tilelang.language as T

def kernel(A, B, sign):
    a = T.alloc_local((16,), "int8")
    b = T.alloc_local((16,), "int8")
    for v in T.vectorized(16):
        a[v] = T.if_then_else(sign == 0, A[v], B[v])
    T.copy(a, B)
"""
SELECT_CUDA = """extern "C" __global__ void kernel(signed char* A, signed char* B, int sign) {
  signed char a[16];
  unsigned char b[16];
  int4 condval;
  if (sign == 0) {
    condval = *(int4*)(A + 0);
  } else {
    condval = *(int4*)(B + 0);
  }
  *(int4*)(a + 0) = condval;
  *(int4*)(B + 0) = *(int4*)(a + 0);
}
"""


def test_a_t_if_then_else_branch_between_two_lines_of_its_directive_and_a_two_word_declaration_are_linked():
    # TileLang's #line: the kernel's def (untrusted) for the declarations, the select's line, then T.copy's.
    links = _inherited({2: ("cell", 3), 4: ("cell", 7), 11: ("cell", 8)}, len(SELECT_CUDA.splitlines()))
    source_map = build_source_map(SourceRecord(SELECT_CUDA, None, "cuda", links, "cell", SELECT_CELL))

    to_cell = {link.cuda_line: link.cell_line for link in source_map.links}
    assert (to_cell[2], to_cell[3]) == (4, 5)  # signed char a[16], unsigned char b[16]: their T.alloc_local
    assert [to_cell.get(n) for n in range(4, 11)] == [7] * 7  # the if, its else and both loads: the select's line
    assert to_cell[11] == 8


def _linked(source: SourceRecord, statement: str) -> list[str]:
    """The CUDA lines linked to the cell line that starts with ``statement``."""
    line = next(n for n, text in enumerate(source.kernel_source.splitlines(), 1) if text.strip().startswith(statement))
    return [text.strip() for text in _cuda(source, line)]


@pytest.mark.slow
def test_a_reducers_init_update_and_finalize_each_link_to_their_cuda():
    from reducer_kernels import row_sum, row_sum_epoch

    epoch = tilelab.explore(row_sum_epoch, arch="sm_90").source
    legacy = tilelab.explore(row_sum, arch="sm_90").source

    # TileLang's #line gave these to the kernel's def (the fill) or to the T.Parallel before them: no cell line.
    assert any("make_float4(broadcast_var" in text for text in _linked(epoch, "T.reducer_init(acc)"))
    finalized = _linked(epoch, "T.finalize_reducer(acc, sums)")
    assert any("tl::AllReduce<tl::SumOp" in text for text in finalized)
    assert any(text.startswith("*(float4*)(sums") and "(acc" in text for text in finalized)  # the result copied out
    assert any("make_float4(broadcast_var" in text for text in _linked(legacy, "T.clear(acc)"))
    legacy_finalized = _linked(legacy, "T.finalize_reducer(acc)")
    assert any("tl::AllReduce<tl::SumOp" in text for text in legacy_finalized)
    # Finalized in place, TileLang copies the result into a scratch buffer of its own, acc_result.
    assert "float acc_result[8];" in legacy_finalized
    assert any(text.startswith("*(float4*)(acc_result") and "(acc" in text for text in legacy_finalized)
    assert not any("AllReduce" in text for text in _linked(legacy, "T.copy(acc, Out"))  # it shares the operand acc, nothing more
    # The accumulate: its #line is the T.Parallel loop's; its body statement is the one naming acc and tile.
    assert any(text.startswith("acc[") and "tile[" in text for text in _linked(epoch, "T.reducer_update(acc[i], tile[i, j])"))
    assert any(text.startswith("acc[") and "tile[" in text for text in _linked(legacy, "acc[i] += tile[i, j]"))
