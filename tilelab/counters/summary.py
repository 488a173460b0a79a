"""What one ncu run says about each profiled kernel: Speed of Light, occupancy, launch, roofline position, advice.

:func:`summarize` reads the long frame of :func:`tilelab.counters.ncu.parse_ncu_csv`
(one row per metric, ncu's advice in ``frame.attrs["rules"]``) into a
:class:`ProfileRecord`: plain frozen data that a :class:`~tilelab.records.KernelRecord`
carries as ``profile`` and serialises with the rest of the record.

The roofline position sets what the kernel achieved against one device's
peaks (:func:`tilelab.peaks.peaks_for`): bytes/s is ncu's DRAM throughput;
FLOP/s is the static estimate's FLOPs (tilelang's Analyzer) over ncu's
duration, so it exists only with an estimate. ncu's CSV names no device (its
``Device`` column is an index), so the caller names it.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from tilelab.peaks import DevicePeaks, peaks_for
from tilelab.records.profile import KernelProfile, ProfileAdvice, ProfileRecord, RooflinePosition

__all__ = ["summarize"]

SOL = "GPU Speed Of Light Throughput"
MEMORY = "Memory Workload Analysis"
OCCUPANCY = "Occupancy"
LAUNCH = "Launch Statistics"
_SECONDS = {"s": 1.0, "second": 1.0, "ms": 1e-3, "msecond": 1e-3, "us": 1e-6, "usecond": 1e-6, "ns": 1e-9, "nsecond": 1e-9}
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}  # ncu's byte units are decimal (49.15 Kbyte = 49152 B)
_LIMITS = ("Registers", "Shared Mem", "Warps", "SM", "Barriers")

def summarize(
    frame: Any, estimate: Any = None, arch: str = "", device_name: str | None = None, estimate_note: str = ""
) -> ProfileRecord:
    """The :class:`ProfileRecord` of an ncu frame (:func:`tilelab.counters.ncu.parse_ncu_csv`).

    Parameters
    ----------
    frame
        The long DataFrame: ``id, kernel, section, metric, value, unit, text``; ``attrs["rules"]`` the advice,
        ``attrs["samples"]`` per kernel name its sampled instructions, a table per launch
        (:mod:`tilelab.counters.source_page`).
    estimate
        The kernel's :class:`~tilelab.records.StaticEstimate`, for achieved FLOP/s (one device kernel only).
    arch, device_name
        Whose peaks the roofline position is measured against (the device's name wins; ``arch`` picks a default).
    estimate_note
        Why there is no estimate, kept in the notes.
    """
    notes = []
    peaks = peaks_for(arch, device_name) if (arch or device_name) else None
    if peaks is not None and estimate is not None:
        peaks = peaks.for_operands(estimate.operand_dtypes)
    elif estimate is not None:
        peaks = estimate.peaks
    if peaks is None:
        notes.append(f"no peak figures for {device_name or arch or 'this device'}: no roofline position")
    elif not device_name:
        notes.append(f"the device was not named: peaks are {peaks.device}'s")
    kernel_names = set(frame["kernel"]) if len(frame) else set()
    if estimate is None:
        notes.append(f"no achieved FLOP/s: {estimate_note or 'no static estimate'}")
    elif len(kernel_names) > 1:
        notes.append("the static estimate covers one device kernel and ncu profiled several: no achieved FLOP/s")
        estimate = None
    rules = frame.attrs.get("rules", [])
    launches = [(int(launch), group) for launch, group in frame.groupby("id", sort=True)]
    samples = _samples_by_launch(launches, frame.attrs.get("samples", {}), notes)
    kernels = tuple(
        replace(
            _kernel_profile(group, launch, [r for r in rules if _rule_launch(r, launch, group)], peaks, estimate),
            samples=samples.get(launch, ()),
        )
        for launch, group in launches
    )
    return ProfileRecord(kernels, device_name, tuple(notes + frame.attrs.get("notes", [])))


def _samples_by_launch(launches: list[tuple[int, Any]], tables: dict[str, tuple], notes: list[str]) -> dict[int, tuple]:
    """Each launch's table of ncu's source page: a kernel's launches take its tables in ID order.

    A kernel whose tables and launches do not number the same gets none (and a note): no table is guessed.
    """
    ids: dict[str, list[int]] = {}
    for launch, group in launches:
        ids.setdefault(str(group["kernel"].iloc[0]), []).append(launch)
    samples: dict[int, tuple] = {}
    for kernel, launch_ids in ids.items():
        found = tables.get(kernel, ())
        if len(found) == len(launch_ids):
            samples.update(zip(launch_ids, found, strict=True))
        elif found:
            notes.append(
                f"ncu's source page has {len(found)} tables for the {len(launch_ids)} launches of {kernel}: "
                "its warp samples are left out"
            )
    return samples


def _rule_launch(rule: dict, launch: Any, group: Any) -> bool:
    """Whether ``rule`` belongs to this launch (by ncu's ID; by kernel name for rules parsed without one)."""
    if "id" in rule:
        return rule["id"] == launch
    return rule.get("kernel") == group["kernel"].iloc[0]


def _kernel_profile(group: Any, launch: int, rules: list[dict], peaks: Any, estimate: Any) -> KernelProfile:
    metrics = {(row.section, row.metric): row for row in group.itertuples()}

    def number(section: str, metric: str) -> float | None:
        row = metrics.get((section, metric))
        return None if row is None or math.isnan(row.value) else float(row.value)

    def integer(section: str, metric: str) -> int | None:
        value = number(section, metric)
        return None if value is None else int(value)

    duration = _scaled(metrics.get((SOL, "Duration")), _SECONDS)
    dram_bytes = _bytes(metrics.get((MEMORY, "Memory Throughput")), "/s")
    shared = [_bytes(metrics.get((LAUNCH, f"{kind} Shared Memory Per Block")), "/block") for kind in ("Static", "Dynamic")]
    limits = {name: number(OCCUPANCY, f"Block Limit {name}") for name in _LIMITS}
    return KernelProfile(
        kernel=str(group["kernel"].iloc[0]),
        launch=launch,
        duration_s=duration,
        compute_throughput=number(SOL, "Compute (SM) Throughput"),
        memory_throughput=number(SOL, "Memory Throughput"),
        dram_throughput=number(SOL, "DRAM Throughput"),
        l1_throughput=number(SOL, "L1/TEX Cache Throughput"),
        l2_throughput=number(SOL, "L2 Cache Throughput"),
        dram_bytes_per_s=dram_bytes,
        achieved_occupancy=number(OCCUPANCY, "Achieved Occupancy"),
        theoretical_occupancy=number(OCCUPANCY, "Theoretical Occupancy"),
        block_limits={name: value for name, value in limits.items() if value is not None},
        registers_per_thread=integer(LAUNCH, "Registers Per Thread"),
        block_size=integer(LAUNCH, "Block Size"),
        grid_size=integer(LAUNCH, "Grid Size"),
        threads=integer(LAUNCH, "Threads"),
        shared_bytes_per_block=None if shared == [None, None] else sum(value or 0.0 for value in shared),
        waves_per_sm=number(LAUNCH, "Waves Per SM"),
        roofline=_roofline(peaks, estimate, duration, dram_bytes),
        advice=_advice(rules),
    )


def _roofline(
    peaks: DevicePeaks | None, estimate: Any, duration: float | None, dram_bytes: float | None
) -> RooflinePosition | None:
    if peaks is None:
        return None
    flops = estimate.flops if estimate is not None else None
    return RooflinePosition(
        peaks=peaks,
        achieved_bytes_per_s=dram_bytes,
        flops=flops,
        min_bytes=estimate.min_bytes if estimate is not None else None,
        achieved_flops_per_s=flops / duration if flops is not None and duration else None,
    )


def _advice(rules: list[dict]) -> tuple[ProfileAdvice, ...]:
    """ncu's rules, those with the largest estimated speedup first (then in ncu's order)."""
    advice = [
        ProfileAdvice(
            rule=str(rule.get("rule", "")),
            section=str(rule.get("section", "")),
            kind=str(rule.get("type", "")),
            description=str(rule.get("description", "")),
            estimated_speedup=_finite(rule.get("estimated_speedup")),
        )
        for rule in rules
    ]
    return tuple(sorted(advice, key=lambda item: -(item.estimated_speedup or 0.0)))


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _scaled(row: Any, units: dict[str, float]) -> float | None:
    """A row's value in base units (``units`` maps ncu's unit to a factor); None when missing or unknown."""
    if row is None or math.isnan(row.value) or row.unit not in units:
        return None
    return float(row.value) * units[row.unit]


def _bytes(row: Any, per: str) -> float | None:
    """A ``[KMGT]byte<per>`` row in bytes (ncu's prefixes are decimal)."""
    factor = _PREFIX.get(row.unit.removesuffix(f"byte{per}")) if row is not None and row.unit.endswith(f"byte{per}") else None
    return None if factor is None else _scaled(row, {row.unit: factor})
