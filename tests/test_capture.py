"""Capture: one compile -> one KernelRecord, lowered for sm_80/sm_90 without a GPU."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import tilelang  # before tvm: tilelang bundles its own
import tvm
from kernels import eager_gemm, matmul
from tune_kernels import scale_add

import tilelab
from tilelab.recorder import PassRecorder
from tilelab.records import CompileMode, KernelRecord, LayoutKind, Status


@pytest.fixture(scope="module")
def gemm_sm90() -> KernelRecord:
    return tilelab.explore(matmul, arch="sm_90")


@pytest.fixture(scope="module")
def gemm_sm80() -> KernelRecord:
    return tilelab.explore(matmul, arch="sm_80")


def test_gemm_lowered_for_sm90_records_every_pass_and_wgmma(gemm_sm90):
    from conftest import cuda_available

    assert gemm_sm90.status is Status.OK
    # On a Hopper GPU, sm_90 is the present device: compiled (as sm_90a) rather than lowered.
    assert gemm_sm90.mode is (CompileMode.COMPILED if cuda_available() else CompileMode.LOWERED)
    assert gemm_sm90.arch.startswith("sm_90")
    assert len(gemm_sm90.passes) >= 70
    assert "tl.LayoutInference" in [p.name for p in gemm_sm90.passes]
    assert [p.index for p in gemm_sm90.passes] == list(range(len(gemm_sm90.passes)))
    assert "wgmma" in gemm_sm90.source.device


def test_gemm_lowered_for_sm80_uses_mma_and_cp_async(gemm_sm80):
    assert len(gemm_sm80.passes) >= 70
    assert "tl.LayoutInference" in [p.name for p in gemm_sm80.passes]
    device = gemm_sm80.source.device
    assert "mma" in device and "wgmma" not in device
    assert "cp_async" in device


def test_accumulator_fragment_spreads_evenly_over_128_threads(gemm_sm90, gemm_sm80):
    for record in (gemm_sm90, gemm_sm80):
        c_local = record.layouts["C_local"]
        assert c_local.kind is LayoutKind.FRAGMENT
        assert c_local.shape == (128, 128)
        counts = np.bincount(c_local.thread.ravel())
        assert len(counts) == 128
        assert counts.min() == counts.max() == 128 * 128 // 128


def test_fragment_tables_agree_with_tilelangs_own_mapping(gemm_sm90):
    from tvm.target import Target

    from tilelab.layouts import layouts_of_module

    func = matmul.get_tir()
    seen = {}

    # Re-run layout inference to get the live Fragment and compare a sample point by point.
    from tilelang.instrumentation import (
        PassEventObserver,
        PassInstrumentationTool,
        StackedPassInstrument,
        compile_pass_instrumentation,
        create_pass_instruments,
    )

    class Keep(PassEventObserver):
        def pass_finished(self, mod, event, state):
            if event.name == "tl.LayoutInference":
                seen["mod"] = mod
                seen["records"] = layouts_of_module(mod)
                seen["layouts"] = _layout_objects(mod)

    class Tool(PassInstrumentationTool):
        def create_pass_instrument(self):
            return StackedPassInstrument(Keep(), capture_nested=False)

    target = Target({"kind": "cuda", "arch": "sm_90"})
    with (
        compile_pass_instrumentation("test", tools=[Tool()], include_default_tools=False, reuse_existing=False),
        tilelang.transform.PassContext(opt_level=3, instruments=create_pass_instruments()),
        target,
    ):
        tilelang.lower(func, target=target, enable_device_compile=False)
    fragment = seen["layouts"]["C_local"]
    table = seen["records"]["C_local"]
    for i, j in [(0, 0), (5, 17), (64, 3), (127, 127), (33, 90)]:
        assert int(fragment.map_forward_thread([i, j])[0]) == table.thread[0, i, j]
        assert int(fragment.map_forward_index([i, j])[0]) == table.local_index[0, i, j]


def _layout_objects(mod):
    from tvm import tirx

    found = {}

    def visit(node):
        annotations = getattr(node, "annotations", None)
        if annotations is not None and hasattr(node, "alloc_buffers") and "layout_map" in annotations:
            for buffer, layout in annotations["layout_map"].items():
                found[str(buffer.name)] = layout

    for _, func in mod.functions.items():
        tirx.stmt_functor.post_order_visit(func.body, visit)
    return found


def test_swizzled_shared_buffer_maps_each_element_to_a_distinct_offset(gemm_sm90):
    a_shared = gemm_sm90.layouts["A_shared"]
    assert a_shared.kind is LayoutKind.SHARED
    assert a_shared.offset.shape == a_shared.shape
    assert len(np.unique(a_shared.offset)) == a_shared.offset.size
    rows = a_shared.offset[0]
    contiguous = [np.array_equal(row, np.arange(row.size) + row.min()) for row in rows]
    assert contiguous[0] and not all(contiguous), "the swizzle permutes the chunks of some rows"


def test_passes_mark_changes_and_count_lines(gemm_sm90):
    changed = [p for p in gemm_sm90.passes if p.changed]
    unchanged = [p for p in gemm_sm90.passes[1:] if not p.changed]
    assert changed and unchanged
    assert all(p.added + p.removed > 0 for p in changed)
    assert all(p.added == p.removed == 0 for p in unchanged)
    assert all(p.seconds >= 0 for p in gemm_sm90.passes)


def test_passes_tvm_knows_only_as_pass_fn_are_named_by_the_tilelang_line_that_ran_them(gemm_sm90):
    names = [p.name for p in gemm_sm90.passes]

    checks = ["tilelang.analysis.NestedLoopChecker", "tilelang.analysis.ParallelLocalIndexChecker", "tilelang.analysis.FragmentLoopChecker"]
    assert names[:3] == checks  # TileLang's semantic checks, before lowering
    assert "tilelang.transform.HoistBroadcastValues" in names and "pass_fn" not in names


def test_the_first_pass_counts_as_a_change_only_when_it_changed_the_elaborated_ir(gemm_sm90):
    def first_pass(given, returned):
        recorder, event = PassRecorder(), SimpleNamespace(name="tl.SomePass", phase=None)
        recorder.pass_finished(returned, event, recorder.pass_started(given, event))
        return recorder.passes[0]

    elaborated, other = (tvm.IRModule({"main": scale_add.get_tir(N=n, block=32)}) for n in (256, 512))
    kept, changed = first_pass(elaborated, elaborated), first_pass(elaborated, other)

    assert [(p.changed, p.added, p.removed) for p in gemm_sm90.passes[:3]] == [(False, 0, 0)] * 3  # TileLang's checks
    assert (kept.changed, kept.added, kept.removed) == (False, 0, 0)
    assert (changed.changed, changed.added, changed.removed) == (True, changed.ir.count("\n") + 1, 0)  # all of it: no IR before


def test_cuda_lines_link_back_to_the_kernels_python_lines(gemm_sm90):
    source = gemm_sm90.source
    assert source.kernel_file.endswith("kernels.py")
    store_line = next(n for n, text in enumerate(source.kernel_source.splitlines(), 1) if "T.copy(C_local" in text)
    cuda_lines = source.source_map.cuda_lines_for(store_line)
    assert cuda_lines
    assert any("C_local" in source.device.splitlines()[n - 1] for n in cuda_lines)
    assert source.source_map.cell_line_for(cuda_lines[0]) == store_line
    assert any(link.line == store_line for link in source.line_links)  # TileLang's own directive, kept as emitted
    assert "#line" not in source.device


def test_the_source_map_is_computed_at_capture_and_kept_through_json_and_load(gemm_sm90, tmp_path):
    source_map = gemm_sm90.source.source_map
    cell = gemm_sm90.source.kernel_source.splitlines()
    gemm_line = next(n for n, text in enumerate(cell, 1) if text.strip().startswith("T.gemm"))
    path = tmp_path / "gemm.json"

    gemm_sm90.save(path)

    assert source_map is not None and "gemm" in [op.name for op in source_map.ops]
    assert any("wgmma" in gemm_sm90.source.device.splitlines()[n - 1] for n in source_map.cuda_lines_for(gemm_line))
    assert KernelRecord.from_json(gemm_sm90.to_json()).source.source_map == source_map
    assert tilelab.load(path).source.source_map == source_map


def test_launch_facts_show_the_warp_specialised_thread_count(gemm_sm90, gemm_sm80):
    assert gemm_sm90.launch.grid == (8, 8, 1)
    assert gemm_sm90.launch.threads == 256  # producer warp group added to the 128 consumers
    assert gemm_sm80.launch.threads == 128
    assert gemm_sm90.launch.dynamic_shared_bytes > 0


def test_record_round_trips_through_json(gemm_sm90):
    text = gemm_sm90.to_json()
    assert type(gemm_sm90.passes[0].ir) is str
    again = KernelRecord.from_json(text)
    assert again == gemm_sm90
    assert again.layouts["C_local"].thread.dtype == gemm_sm90.layouts["C_local"].thread.dtype


def test_json_of_another_format_version_is_refused(gemm_sm90):
    import json

    payload = json.loads(gemm_sm90.to_json())
    payload["format"] = 999
    with pytest.raises(ValueError, match="format 999"):
        KernelRecord.from_json(json.dumps(payload))


def test_cache_key_is_stable_and_depends_on_target(gemm_sm90, gemm_sm80):
    again = tilelab.explore(matmul, arch="sm_90")
    assert again.cache_key == gemm_sm90.cache_key
    assert gemm_sm80.cache_key != gemm_sm90.cache_key


def test_eager_gemm_is_explored_with_meta_tensors():
    import torch

    a = torch.empty(1024, 512, dtype=torch.float16, device="meta")
    record = tilelab.explore(eager_gemm, a, tilelab.place(512, 256))
    assert record.ok and record.name == "eager_gemm"
    assert record.arguments["arg0"] == "Tensor[1024, 512; torch.float16]"
    assert record.launch.grid == (2, 8, 1)
    assert "C_local" in record.layouts


def test_flash_attention_forward_is_explored_for_sm90():
    from kernels import flash_attention

    record = tilelab.explore(flash_attention, arch="sm_90")
    assert record.ok
    assert len(record.passes) >= 70
    assert {"acc_s", "acc_o", "scores_max"} <= set(record.layouts)
    scores_max = record.layouts["scores_max"]
    assert scores_max.replicas == 4  # each row max is held by the 4 threads that share the row
    assert scores_max.thread.shape == (4, 128)
    assert len(np.unique(scores_max.thread[:, 0])) == 4
    assert "wgmma" in record.source.device


def test_explore_rejects_what_is_not_a_kernel():
    with pytest.raises(TypeError, match=r"needs a @tilelang\.jit .*function or a PrimFunc"):
        tilelab.explore(lambda: None)


def test_dynamic_shapes_keep_their_grid_expression():
    import tilelang.language as T

    @tilelang.jit
    def scale(block=128):
        n = T.dynamic("n")

        @T.prim_func
        def main(A: T.Tensor((n,), T.float32)):
            with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
                for i in T.Parallel(block):
                    A[bx * block + i] = A[bx * block + i] * 2.0

        return main

    record = tilelab.explore(scale, arch="sm_90")
    assert record.ok
    assert isinstance(record.launch.grid[0], str) and "n" in record.launch.grid[0]
    assert record.launch.threads == 128
    assert KernelRecord.from_json(record.to_json()) == record


def test_a_kernel_whose_jit_names_the_cpu_compiles_for_it_unless_an_arch_or_target_is_given():
    as_declared = tilelab.explore(scale_add, N=256, block=32, machine_code=False)  # @tilelang.jit(target="c")
    asked_for = tilelab.explore(scale_add, N=256, block=32, arch="sm_80", machine_code=False)

    assert (as_declared.arch, as_declared.source.language, as_declared.mode) == ("cpu", "c", CompileMode.COMPILED)
    assert (asked_for.arch, asked_for.source.language) == ("sm_80", "cuda")
    assert tilelab.explore(matmul, machine_code=False).arch == "sm_90"  # no target declared: the default arch
