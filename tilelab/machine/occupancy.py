"""Per-arch limits, theoretical occupancy, and whether a kernel can launch at all.

The limits are one table, :data:`ARCH_LIMITS`, taken from the CUDA C++
Programming Guide (CUDA 13.0), "Compute Capabilities" → "Technical
Specifications per Compute Capability", and, for the allocation rules, from
the CUDA Occupancy Calculator (``cuda_occupancy.h``): registers are allocated
per warp in units of 256 and split over 4 SM sub-partitions; shared memory in
units of 128 bytes, and every block also takes 1 KiB the system reserves
(compute capability 8.0 and later).

Occupancy here is theoretical: the blocks per SM that registers, shared
memory, threads and the block limit allow, with the largest shared-memory
carveout. It needs no GPU.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tilelab.records import KernelResources, OccupancyRecord

__all__ = ["ARCH_LIMITS", "LIMITS_SOURCE", "ArchLimits", "byte_size", "launch_problems", "limits_for", "occupancy"]

LIMITS_SOURCE = (
    "CUDA C++ Programming Guide (CUDA 13.0), Compute Capabilities: Technical Specifications per Compute Capability; "
    "allocation granularities from the CUDA Occupancy Calculator (cuda_occupancy.h)"
)
_KIB = 1024
_WARP = 32


@dataclass(frozen=True)
class ArchLimits:
    """The limits of one compute capability that decide occupancy and launchability."""

    compute_capability: str
    max_blocks_per_sm: int
    max_warps_per_sm: int
    shared_per_sm: int  # bytes, the largest carveout
    max_shared_per_block: int  # bytes, with the opt-in (cudaFuncAttributeMaxDynamicSharedMemorySize)
    max_threads_per_block: int = 1024
    max_registers_per_thread: int = 255
    registers_per_sm: int = 64 * _KIB
    max_registers_per_block: int = 64 * _KIB
    register_unit: int = 256  # registers allocated per warp in multiples of this
    sub_partitions: int = 4  # the register file is split over the SM's 4 schedulers
    shared_unit: int = 128  # bytes
    reserved_shared_per_block: int = _KIB  # the system's shared memory in every block

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * _WARP


# compute capability: blocks/SM, warps/SM, shared/SM, shared/block (opt-in)
ARCH_LIMITS: dict[str, ArchLimits] = {
    "sm_80": ArchLimits("8.0", 32, 64, 164 * _KIB, 163 * _KIB),
    "sm_86": ArchLimits("8.6", 16, 48, 100 * _KIB, 99 * _KIB),
    "sm_89": ArchLimits("8.9", 24, 48, 100 * _KIB, 99 * _KIB),
    "sm_90": ArchLimits("9.0", 32, 64, 228 * _KIB, 227 * _KIB),
    "sm_100": ArchLimits("10.0", 32, 64, 228 * _KIB, 227 * _KIB),
    "sm_120": ArchLimits("12.0", 32, 48, 100 * _KIB, 99 * _KIB),
}


def limits_for(arch: str) -> ArchLimits:
    """The limits of ``arch`` (``sm_90a`` and ``sm_100a`` share their base arch's)."""
    base = arch.strip().lower().rstrip("af")
    if base not in ARCH_LIMITS:
        raise KeyError(f"no limits known for {arch!r}; known: {', '.join(ARCH_LIMITS)}")
    return ARCH_LIMITS[base]


def byte_size(value: int) -> str:
    """``49152 B (48 KiB)``: exact bytes, with KiB beside them from 1 KiB up (how limits and tile sizes are thought of)."""
    return f"{value} B ({value / _KIB:.4g} KiB)" if value >= _KIB else f"{value} B"


def _threads_problem(threads: int, arch: str, limits: ArchLimits) -> str | None:
    if threads > limits.max_threads_per_block:
        return f"{threads} threads per block exceed {arch}'s limit of {limits.max_threads_per_block}"
    return None


def _shared_problem(static: int, dynamic: int, arch: str, limits: ArchLimits) -> str | None:
    total = static + dynamic
    if total <= limits.max_shared_per_block:
        return None
    parts = f"static {static} B + dynamic {dynamic} B" if static else f"dynamic {dynamic} B"
    return (
        f"shared memory {byte_size(total)} per block ({parts}) exceeds {arch}'s limit of "
        f"{byte_size(limits.max_shared_per_block)} per block"
    )


def launch_problems(launches: Iterable[Any], arch: str) -> list[str]:
    """Why each launch cannot run on ``arch``: threads or dynamic shared memory over the limits.

    ``launches`` are :class:`~tilelab.records.LaunchRecord` (``kernel``,
    ``threads``, ``dynamic_shared_bytes``). Registers and static shared memory
    need ptxas: :func:`occupancy` checks those too. An unknown arch gives none.
    """
    try:
        limits = limits_for(arch)
    except KeyError:
        return []
    problems = []
    for launch in launches:
        name = getattr(launch, "kernel", "") or "kernel"
        for problem in (
            _threads_problem(launch.threads, arch, limits),
            _shared_problem(0, launch.dynamic_shared_bytes, arch, limits),
        ):
            if problem:
                problems.append(f"{name}: {problem}")
    return problems


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def _blocks_by_registers(registers: int, warps: int, limits: ArchLimits) -> tuple[int, int]:
    """(blocks per SM the register file allows, registers allocated per block), as the occupancy calculator does."""
    per_warp = _round_up(registers * _WARP, limits.register_unit)
    if per_warp == 0:
        return limits.max_blocks_per_sm, 0
    per_block = per_warp * warps
    # The hardware check assumes warps spread over every sub-partition at once.
    assumed = per_warp * _round_up(warps, limits.sub_partitions)
    if max(per_block, assumed) > limits.max_registers_per_block:
        return 0, per_block
    warps_per_partition = (limits.registers_per_sm // limits.sub_partitions) // per_warp
    return (warps_per_partition * limits.sub_partitions) // warps, per_block


def _register_problem(resources: KernelResources, threads: int, per_block: int, arch: str, limits: ArchLimits) -> str:
    if resources.registers > limits.max_registers_per_thread:
        return f"{resources.registers} registers per thread exceed {arch}'s limit of {limits.max_registers_per_thread}"
    return (
        f"{resources.registers} registers × {threads} threads need {per_block} registers per block "
        f"(allocated per warp); {arch} has {limits.max_registers_per_block}"
    )


def occupancy(resources: KernelResources, arch: str, threads_per_block: int | None = None) -> OccupancyRecord:
    """Theoretical occupancy of a kernel with ``resources`` on ``arch``, and whether it can launch.

    Parameters
    ----------
    resources
        ptxas's numbers for the kernel and the launch's dynamic shared memory.
    arch
        ``sm_80`` … ``sm_120`` (an ``a`` suffix is ignored).
    threads_per_block
        The launch's block size (default: ``resources.threads_per_block``).
    """
    limits = limits_for(arch)
    threads = threads_per_block or resources.threads_per_block or 0
    if threads <= 0:
        raise ValueError(f"{resources.kernel}: threads per block unknown; pass threads_per_block")
    warps = -(-threads // _WARP)
    by_registers, registers_per_block = _blocks_by_registers(resources.registers, warps, limits)
    shared = _round_up(resources.total_shared_bytes + limits.reserved_shared_per_block, limits.shared_unit)
    blocks = {
        "registers": by_registers,
        "shared memory": limits.shared_per_sm // shared,
        "threads": limits.max_warps_per_sm // warps,
        "blocks": limits.max_blocks_per_sm,
    }
    reasons = [
        p
        for p in (
            _threads_problem(threads, arch, limits),
            _shared_problem(resources.shared_bytes, resources.dynamic_shared_bytes, arch, limits),
        )
        if p
    ]
    if by_registers == 0:
        reasons.append(_register_problem(resources, threads, registers_per_block, arch, limits))
    limited_by = min(blocks, key=lambda name: blocks[name])
    per_sm = 0 if reasons else blocks[limited_by]
    return OccupancyRecord(
        arch=arch,
        threads_per_block=threads,
        warps_per_block=warps,
        blocks_per_sm=per_sm,
        warps_per_sm=per_sm * warps,
        max_warps_per_sm=limits.max_warps_per_sm,
        occupancy=per_sm * warps / limits.max_warps_per_sm,
        limited_by=limited_by,
        blocks_by_limit={name: min(value, limits.max_blocks_per_sm) for name, value in blocks.items()},
        registers_per_block=registers_per_block,
        shared_per_block=shared,
        launchable=not reasons,
        reasons=tuple(reasons),
    )
