"""The static roofline estimate: tilelang's Analyzer on real elaborated kernels, in records, views and tuning rows."""

from __future__ import annotations

import json

import pytest
import tilelang
import tilelang.language as T
from kernels import flash_attention, matmul
from sample_records import with_flat_peaks

import tilelab
from tilelab import _tilelang as tl
from tilelab.estimate import static_estimate
from tilelab.peaks import DEVICE_PEAKS, DevicePeaks, peaks_for
from tilelab.records import KernelRecord, StaticEstimate
from tilelab.targets import resolve_target
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus


def _estimate(kernel, arch="sm_90a", device_name=None, **kwargs):
    func, _ = tl.elaborate(kernel, (), kwargs, resolve_target(arch, None).tvm_target())
    return static_estimate(func, arch, device_name)


@pytest.fixture(scope="module")
def gemm_record():
    return tilelab.explore(matmul, arch="sm_90a", machine_code=False)


# -- what the Analyzer counts ------------------------------------------------------------------
def test_gemm_flops_are_two_m_n_k_and_bytes_are_every_blocks_tiles(gemm_record):
    m = n = k = 1024
    blocks = (m // 128) * (n // 128)
    tiles = (k // 32) * (128 * 32 + 32 * 128) * 2  # A and B tiles a block loads over the K loop, fp16
    estimate = gemm_record.estimate

    assert estimate.flops == 2 * m * n * k
    assert estimate.bytes == blocks * (tiles + 128 * 128 * 2)  # ... and its C tile stored
    assert estimate.min_bytes == (m * k + k * n + m * n) * 2  # A, B and C each once
    assert gemm_record.estimate_note == ""


def test_a_big_gemm_is_compute_bound_and_a_skinny_one_memory_bound():
    big, _ = _estimate(matmul, M=8192, N=8192, K=8192)
    skinny, _ = _estimate(matmul, M=128, N=8192, K=8192)

    assert big.bound == "compute" and big.roofline_ms == pytest.approx(2 * 8192**3 / 989.5e12 * 1e3)
    assert skinny.bound == "memory" and skinny.roofline_ms == pytest.approx(skinny.min_bytes / 3.35e12 * 1e3)


def test_bytes_past_two_gib_do_not_wrap():
    big, _ = _estimate(matmul, M=8192, N=8192, K=8192)

    assert big.bytes == 64 * 64 * (2 * 128 * 8192 * 2) + 8192 * 8192 * 2


def test_flash_attention_counts_both_of_its_gemms():
    estimate, reason = _estimate(flash_attention, batch=1, heads=32, seq_len=1024, dim=128)

    assert reason is None
    assert estimate.flops == 4 * 1024 * 1024 * 128 * 32
    assert estimate.min_bytes == 4 * 1024 * 32 * 128 * 2  # Q, K, V and the output once


# -- where it does not work, and why -------------------------------------------------------------
def test_causal_flash_attention_has_no_estimate_and_says_why():
    estimate, reason = _estimate(flash_attention, is_causal=True)

    assert estimate is None and "causal" in reason and "\n" not in reason


def test_flash_attention_over_a_batch_is_refused_for_its_grid_z():
    estimate, reason = _estimate(flash_attention, batch=4)

    assert estimate is None and "blockIdx.z = 4" in reason


@tilelang.jit(out_idx=[-1])
def packed_copy(M=256, dtype=T.float16x2):
    @T.prim_func
    def copy(A: T.Tensor((M, 128), dtype), C: T.Tensor((M, 128), dtype)):
        with T.Kernel(M // 64, threads=128) as bx:
            tile = T.alloc_shared((64, 128), dtype)
            T.copy(A[bx * 64, 0], tile)
            T.copy(tile, C[bx * 64, 0])

    return copy


def test_the_analyzer_raising_on_a_vector_dtype_gives_none_and_its_error():
    estimate, reason = _estimate(packed_copy)

    assert estimate is None
    assert reason == "tilelang's Analyzer cannot read this kernel (TypeError: data type dtype('float16x2') not understood)"


def test_sub_byte_data_is_refused_rather_than_counted_a_byte_per_element():
    estimate, reason = _estimate(packed_copy, dtype=T.int4)

    assert estimate is None and "int4" in reason


@tilelang.jit(out_idx=[-1])
def elementwise_add(N=4096):
    @T.prim_func
    def add(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16), C: T.Tensor((N,), T.float16)):
        with T.Kernel(N // 256, threads=256) as bx:
            for i in T.Parallel(256):
                C[bx * 256 + i] = A[bx * 256 + i] + B[bx * 256 + i]

    return add


def test_global_accesses_outside_t_copy_are_refused():
    estimate, reason = _estimate(elementwise_add)

    assert estimate is None and reason.startswith("3 global memory accesses outside T.copy")


def test_an_arch_without_peak_figures_says_so():
    estimate, reason = _estimate(matmul, arch="sm_89")

    assert estimate is None and "sm_89" in reason


# -- peaks --------------------------------------------------------------------------------------------
def test_the_present_device_picks_its_peaks_and_an_arch_its_default():
    assert peaks_for("sm_90a", "NVIDIA H200").device == "H200 SXM"
    assert peaks_for("sm_90", "NVIDIA H100 PCIe").device == "H100 PCIe"
    assert peaks_for("sm_90a").device == "H100 SXM"
    assert peaks_for("sm_80").device == "A100 SXM 80GB"
    assert all("datasheet" in peaks.source for peaks in DEVICE_PEAKS.values())


def test_the_flop_peak_is_the_tensor_cores_for_the_gemms_operand_dtype():
    fp16, _ = _estimate(matmul, M=8192, N=8192, K=8192)
    fp8, _ = _estimate(matmul, M=8192, N=8192, K=8192, dtype=T.float8_e4m3fn)
    tf32, _ = _estimate(matmul, M=8192, N=8192, K=8192, dtype=T.float32)

    assert fp16.operand_dtypes == ("float16",) and fp16.peaks.flops_per_s == 989.5e12
    assert fp8.operand_dtypes == ("float8_e4m3fn",) and fp8.peaks.flops_per_s == 2 * fp16.peaks.flops_per_s
    assert "FP8 tensor core dense" in fp8.peaks.source and fp8.roofline_ms == pytest.approx(fp16.roofline_ms / 2)
    assert tf32.peaks.flops_per_s == 494.5e12 and "TF32 tensor core dense" in tf32.peaks.source


def test_gemms_of_two_dtypes_are_held_to_the_slower_peak_and_a_missing_figure_is_named():
    h100 = peaks_for("sm_90a")

    assert h100.for_operands(["float8_e4m3fn", "float16"]).flops_per_s == 989.5e12
    assert h100.for_operands(["float8_e4m3fn", "float32"]).flops_per_s == 494.5e12
    a100_fp8 = peaks_for("sm_80").for_operands(["float8_e5m2"])
    assert a100_fp8.flops_per_s == 312e12 and a100_fp8.source.endswith("no FP8 tensor-core figure, so FP16's")


# -- records -------------------------------------------------------------------------------------
def test_a_record_keeps_its_estimate_and_latency_through_json(gemm_record):
    measured = gemm_record.with_latency(0.004)
    loaded = KernelRecord.from_json(measured.to_json())

    assert loaded.estimate == gemm_record.estimate and loaded.latency_ms == 0.004
    assert loaded.percent_of_roofline == pytest.approx(gemm_record.estimate.roofline_ms / 0.004 * 100)


def test_a_format_2_record_without_an_estimate_loads_with_none(gemm_record):
    payload = json.loads(gemm_record.to_json())
    for name in ("estimate", "estimate_note", "latency_ms"):
        del payload["record"][name]
    payload["format"] = 2

    loaded = KernelRecord.from_json(json.dumps(payload))

    assert loaded.estimate is None and loaded.estimate_note == "" and loaded.percent_of_roofline is None
    assert loaded.passes == gemm_record.passes


def test_a_format_3_estimate_without_operand_dtypes_loads_with_the_fp16_peak(gemm_record):
    payload = json.loads(gemm_record.to_json())
    payload["record"]["estimate"] = with_flat_peaks(payload["record"]["estimate"])
    del payload["record"]["estimate"]["operand_dtypes"]
    payload["format"] = 3

    loaded = KernelRecord.from_json(json.dumps(payload))

    assert loaded.estimate.operand_dtypes == () and loaded.estimate.peaks.flops_per_s == 989.5e12


def test_a_format_6_estimate_with_flat_peaks_loads_as_the_same_estimate_and_saves_them_as_one_value(gemm_record):
    payload = json.loads(gemm_record.to_json())
    payload["record"]["estimate"] = with_flat_peaks(payload["record"]["estimate"])
    payload["format"] = 6

    loaded = KernelRecord.from_json(json.dumps(payload))

    assert loaded.estimate == gemm_record.estimate and loaded.estimate.text() == gemm_record.estimate.text()
    assert json.loads(loaded.to_json())["record"]["estimate"]["peaks"]["device"] == "H100 SXM"


def test_the_overview_shows_the_estimate_and_the_percent_of_roofline(gemm_record):
    from tilelab.views.overview.data import overview_data

    rows = {row["label"]: row["text"] for row in overview_data(gemm_record.with_latency(0.01))["rows"]}

    assert rows["static estimate"].startswith("2.15 GFLOP, 6.29 MB (35.7 MB issued by the blocks), bound: compute")
    assert "on H100 SXM" in rows["static estimate"]
    assert rows["% of roofline"].startswith("22% (measured 0.01 ms)")
    assert "% of roofline" not in [row["label"] for row in overview_data(gemm_record)["rows"]]


def test_the_overview_says_why_a_kernel_has_no_estimate(gemm_record):
    from dataclasses import replace

    from tilelab.views.overview.data import overview_data

    record = replace(gemm_record, estimate=None, estimate_note="the grid has blockIdx.z = 4 <z>")
    rows = {row["label"]: row["text"] for row in overview_data(record)["rows"]}

    assert rows["static estimate"] == "not available: the grid has blockIdx.z = 4 <z>"


# -- tuning rows ------------------------------------------------------------------------------------
def test_roofline_pct_is_the_roofline_time_over_the_measured_latency():
    row = TuneRow(0, {"block_M": 128}, TuneStatus.OK, latency_ms=0.02, roofline_ms=0.005)

    assert row.roofline_pct == pytest.approx(25.0)
    assert TuneRow(1, {}, TuneStatus.OK, roofline_ms=0.005).roofline_pct is None


def test_lowered_tuning_rows_have_roofline_columns():
    import torch

    if torch.cuda.is_available():
        pytest.skip("lowering-only sweeps happen where there is no GPU")
    configs = [{"block_M": 128, "block_N": 128}, {"block_M": 64, "block_N": 64}]
    result = tilelab.tune(matmul, 1024, 1024, 1024, configs=configs, arch="sm_90", db=":memory:")
    frame = result.to_pandas()
    expected, _ = _estimate(matmul, arch="sm_90", M=1024, N=1024, K=1024)

    assert {"roofline_ms", "roofline_pct"} <= set(frame.columns)
    assert frame["roofline_ms"].tolist() == pytest.approx([expected.roofline_ms] * 2)
    assert frame["roofline_pct"].isna().all()  # lowered only: no latency measured


def test_configs_answered_from_the_history_keep_their_roofline(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("lowering-only sweeps happen where there is no GPU")
    configs, db = [{"block_M": 128, "block_N": 128}], tmp_path / "history.db"
    first = tilelab.tune(matmul, 1024, 1024, 1024, configs=configs, arch="sm_90", db=db)
    again = tilelab.tune(matmul, 1024, 1024, 1024, configs=configs, arch="sm_90", db=db)

    assert again.rows[0].cached and again.rows[0].roofline_ms == first.rows[0].roofline_ms > 0


def test_a_configs_record_carries_its_rows_latency():
    row = TuneRow(0, {"block_M": 64}, TuneStatus.OK, latency_ms=0.05)
    result = TuneResult("matmul", ({"block_M": 64},), ("block_M",), "none", kernel=matmul, choice=resolve_target("sm_90a", None))
    result.add(row)

    record = result.record(row)

    assert record.latency_ms == 0.05 and record.estimate is not None
    assert record.percent_of_roofline == pytest.approx(record.estimate.roofline_ms / 0.05 * 100)


@pytest.mark.gpu
def test_a_measured_gemm_stays_within_its_roofline():
    result = tilelab.tune(matmul, 4096, 4096, 4096, configs=[{"block_M": 128, "block_N": 128}], db=":memory:")
    row = next(iter(result.rows.values()))

    assert row.ok and row.roofline_ms is not None
    assert 0 < row.roofline_pct <= 100


def test_static_estimate_is_plain_data():
    estimate = StaticEstimate(2_000_000, 1_000, 500, DevicePeaks("H200 SXM", 1e12, 1e9, "a datasheet"))

    assert estimate.arithmetic_intensity == 4000
    assert estimate.bound == "compute" and estimate.roofline_ms == pytest.approx(2e-3)
