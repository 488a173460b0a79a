"""Occupancy and launchability from the per-arch limits table (no GPU, no compiler)."""

from __future__ import annotations

import pytest

from tilelab.machine.occupancy import ARCH_LIMITS, LIMITS_SOURCE, launch_problems, limits_for, occupancy
from tilelab.records import KernelResources, LaunchRecord


def gemm_resources(**overrides) -> KernelResources:
    """The quickstart GEMM lowered for sm_80 and built for sm_90a, as ptxas and the launch report it."""
    values = {"kernel": "gemm_kernel", "registers": 230, "dynamic_shared_bytes": 49152, "threads_per_block": 128}
    return KernelResources(**{**values, **overrides})


def test_every_arch_the_issue_names_has_limits_and_the_table_cites_its_source():
    assert set(ARCH_LIMITS) == {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}
    assert "CUDA C++ Programming Guide" in LIMITS_SOURCE
    assert limits_for("sm_90a") is ARCH_LIMITS["sm_90"]
    assert limits_for("sm_90").max_shared_per_block == 227 * 1024
    assert limits_for("sm_86").max_threads_per_sm == 1536


def test_an_unknown_arch_is_a_key_error_that_lists_the_known_ones():
    with pytest.raises(KeyError, match="sm_80"):
        limits_for("sm_75")


def test_the_quickstart_gemm_on_an_h100_matches_what_ncu_reported():
    # ncu 2025.3.1 on an H100 (tests/data/ncu_gemm_h100_details.csv): block limit registers 2,
    # theoretical active warps per SM 8, theoretical occupancy 12.50 %.
    result = occupancy(gemm_resources(), "sm_90")

    assert result.blocks_by_limit["registers"] == 2
    assert (result.blocks_per_sm, result.warps_per_sm, result.limited_by) == (2, 8, "registers")
    assert result.occupancy == pytest.approx(0.125)
    assert result.launchable and result.reasons == ()


def test_shared_memory_counts_the_system_reserved_kilobyte_per_block():
    result = occupancy(gemm_resources(registers=32, dynamic_shared_bytes=56 * 1024), "sm_90")

    assert result.shared_per_block == 57 * 1024
    assert result.blocks_by_limit["shared memory"] == 4  # 228 KiB // 57 KiB
    assert result.limited_by == "shared memory"


def test_a_small_kernel_is_limited_by_the_blocks_per_sm():
    result = occupancy(gemm_resources(registers=16, dynamic_shared_bytes=0, threads_per_block=32), "sm_89")

    assert (result.blocks_per_sm, result.limited_by) == (24, "blocks")
    assert result.occupancy == pytest.approx(24 / 48)


def test_too_much_shared_memory_cannot_launch_and_the_reason_has_the_numbers():
    result = occupancy(gemm_resources(shared_bytes=1024, dynamic_shared_bytes=262144), "sm_90")

    assert not result.launchable and result.blocks_per_sm == 0 and result.occupancy == 0
    (reason,) = result.reasons
    assert "263168 B" in reason and "232448 B" in reason and "sm_90" in reason


def test_too_many_threads_cannot_launch():
    result = occupancy(gemm_resources(registers=32, threads_per_block=2048), "sm_80")

    assert not result.launchable
    assert any("2048 threads" in reason and "1024" in reason for reason in result.reasons)


def test_registers_times_threads_over_the_register_file_cannot_launch():
    result = occupancy(gemm_resources(registers=255, threads_per_block=1024, dynamic_shared_bytes=0), "sm_90")

    assert not result.launchable and result.blocks_by_limit["registers"] == 0
    assert any("255 registers × 1024 threads" in reason for reason in result.reasons)


def test_launch_problems_check_threads_and_dynamic_shared_memory_before_any_compiler_runs():
    launches = [
        LaunchRecord((4, 4, 1), (384, 1, 1), 262144, kernel="big_kernel"),
        LaunchRecord((8, 8, 1), (128, 1, 1), 49152, kernel="fine_kernel"),
    ]

    problems = launch_problems(launches, "sm_90a")

    assert len(problems) == 1 and problems[0].startswith("big_kernel: ") and "262144 B" in problems[0]
    assert launch_problems(launches, "sm_75") == []  # no limits known: no claims


def test_threads_per_block_must_be_known():
    with pytest.raises(ValueError, match="threads per block"):
        occupancy(gemm_resources(threads_per_block=None), "sm_90")
