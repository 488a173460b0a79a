"""A CUDA GEMM swept without a GPU: lowered for sm_90 in worker processes, compile status per config."""

from __future__ import annotations

import pytest

import tilelab
from tilelab.tune.result import TuneStatus


@pytest.fixture(scope="module")
def lowered(tmp_path_factory):
    import torch
    from tune_kernels import gemm

    if torch.cuda.is_available():
        pytest.skip("lowering-only sweeps happen where there is no GPU")
    db = tmp_path_factory.mktemp("lowering") / "history.db"
    return tilelab.tune(gemm, 1024, 1024, 1024, block_M=tilelab.choices([64, 128]), threads=tilelab.choices([96, 128]), arch="sm_90", db=db)


def test_cuda_gemm_sweep_records_compile_status_per_config(lowered):
    statuses = {(row.config["block_M"], row.config["threads"]): row.status for row in lowered.rows.values()}

    assert statuses == {
        (64, 96): TuneStatus.COMPILE_ERROR,
        (64, 128): TuneStatus.OK,
        (128, 96): TuneStatus.COMPILE_ERROR,
        (128, 128): TuneStatus.OK,
    }
    assert not lowered.runnable and lowered.device == "none (lowered for sm_90)"


def test_lowered_rows_have_compile_times_and_no_latency(lowered):
    frame = lowered.to_pandas()

    assert frame["compile_s"].gt(0).all()
    assert frame["latency_ms"].isna().all()
    assert lowered.best is None
    assert all("warp" in row.error for row in lowered.rows.values() if not row.ok)


def test_a_lowered_sweep_has_no_best_kernel(lowered):
    with pytest.raises(ValueError, match="only lowered"):
        _ = lowered.best_kernel


def test_record_drills_down_into_one_config(lowered):
    from tilelab.errors import KernelCompileError

    record = lowered.record({"block_M": 64, "threads": 128})
    with pytest.raises(KernelCompileError) as failed:
        lowered.record(next(row for row in lowered.rows.values() if not row.ok))

    assert record.ok and record.lowered_only and record.arch == "sm_90"
    assert record.arguments["block_M"] == "64"
    assert not failed.value.record.ok


# -- machine-code columns without a GPU (nvcc and ptxas) ----------------------------------------------------
GOOD, SMALL = {"block_M": 128, "block_N": 128, "block_K": 32, "num_stages": 3}, {"block_M": 64, "block_N": 64, "block_K": 32, "num_stages": 2}
TOO_BIG = {"block_M": 256, "block_N": 256, "block_K": 64, "num_stages": 4}  # 256 KiB of shared memory


def _needs_nvcc():
    from tilelab.machine.build import find_tool

    if find_tool("nvcc") is None or find_tool("ptxas") is None:
        pytest.skip("needs nvcc and ptxas")


@pytest.fixture(scope="module", params=["sm_80", "sm_90"])
def resourced(request):
    import torch
    from tune_kernels import gemm

    _needs_nvcc()
    if torch.cuda.is_available():
        pytest.skip("lowering-only sweeps happen where there is no GPU")
    configs = [GOOD, SMALL, TOO_BIG] if request.param == "sm_80" else [GOOD, TOO_BIG]
    result = tilelab.tune(gemm, 1024, 1024, 1024, configs=configs, arch=request.param, db=":memory:")
    return request.param, {(row.config["block_M"], row.config["num_stages"]): row for row in result.rows.values()}, result


def test_a_lowering_only_sweep_has_registers_and_occupancy_per_config(resourced):
    arch, rows, result = resourced
    good = rows[(128, 3)]

    assert good.ok and good.registers > 0 and good.spills == 0
    assert good.shared_bytes >= 128 * 32 * 2 * 2 * 2  # A and B tiles, fp16, at least two stages
    assert 0 < good.occupancy <= 1 and good.launchable is True
    assert result.notes == []
    if arch == "sm_80":  # a smaller tile takes fewer registers and fits more blocks per SM
        small = rows[(64, 2)]
        assert small.registers < good.registers and small.occupancy > good.occupancy


def test_a_config_over_the_shared_memory_limit_cannot_launch_and_says_why(resourced):
    arch, rows, _ = resourced
    big = rows[(256, 4)]

    assert big.status is TuneStatus.CANNOT_LAUNCH and big.launchable is False
    assert big.shared_bytes == 262144 and "262144 B (256 KiB)" in big.error and arch in big.error
    assert big.latency_ms is None and big.bench_s is None


def test_resource_columns_reach_the_frame_and_the_history(resourced, tmp_path):
    from tilelab.tune.store import RunKey, TuningStore

    _, _, result = resourced
    frame = result.to_pandas()
    store = TuningStore(tmp_path / "history.db")
    key = RunKey.of("gemm", "source", "{}", "{}", "none")
    for row in result.rows.values():
        store.write(key, result.id, row)
    restored = {config_key: stored.row for config_key, stored in store.measured(key).items()}

    assert str(frame["registers"].dtype) == "Int64" and str(frame["launchable"].dtype) == "boolean"
    assert frame.loc[frame["status"] == "ok", "registers"].gt(0).all()
    assert sorted((r.registers, r.occupancy, r.launchable) for r in restored.values() if r.ok) == sorted(
        (r.registers, r.occupancy, r.launchable) for r in result.rows.values() if r.ok
    )


def test_without_nvcc_a_config_compiles_with_empty_columns_and_one_note(monkeypatch):
    from tune_kernels import gemm

    from tilelab.machine.build import NVCC_MISSING
    from tilelab.targets import resolve_target
    from tilelab.tune.worker import _compile

    monkeypatch.setattr("tilelab.machine.build.find_tool", lambda name: None)
    setup = {"args": (256, 256, 256), "fixed": {}, "choice": resolve_target("sm_80", None), "resources": True}

    status, error, _, columns, notes = _compile(setup, gemm, {"block_M": 64, "block_N": 64})

    assert (status, error, columns["roofline_ms"] > 0) == ("ok", None, True)  # the static roofline needs no nvcc
    assert not {"registers", "spills", "shared_bytes", "occupancy"} & set(columns)  # what nvcc's ptxas would give
    assert notes == [NVCC_MISSING]


def test_with_machine_code_off_a_config_compiles_with_empty_columns_and_says_how_to_turn_it_on(monkeypatch):
    from tune_kernels import gemm

    from tilelab.machine.build import MACHINE_CODE_OFF
    from tilelab.targets import resolve_target
    from tilelab.tune.worker import _compile

    monkeypatch.setenv("TILELAB_MACHINE_CODE", "0")
    setup = {"args": (256, 256, 256), "fixed": {}, "choice": resolve_target("sm_80", None), "resources": True}

    status, error, _, columns, notes = _compile(setup, gemm, {"block_M": 64, "block_N": 64})

    assert (status, error, columns["roofline_ms"] > 0) == ("ok", None, True)
    assert not {"registers", "spills", "shared_bytes", "occupancy"} & set(columns)
    assert notes == [MACHINE_CODE_OFF]
