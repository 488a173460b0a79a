"""The Profile tab's data, the only code that shapes it: one ncu run of a kernel as, per profiled launch, a head
line and its sections (Speed of Light bars, the roofline position with the plot's geometry, occupancy, launch,
ncu's advice); sections with nothing to show are left out. Every label and number is formatted here, and the
roofline plot's coordinates are computed here, so the snapshot and the live tab draw the same picture.
"""

from __future__ import annotations

import math
from typing import Any

from tilelab.records.profile import KernelProfile, ProfileRecord, RooflinePosition

__all__ = ["PLOT", "profile_data"]

PLOT = {"width": 360, "height": 220, "left": 58, "right": 12, "top": 12, "bottom": 34}  # the roofline plot, in px


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g} %"


def _seconds(value: float) -> str:
    return f"{value * 1e3:.4g} ms" if value >= 1e-3 else f"{value * 1e6:.4g} µs"


def _bars(kernel: KernelProfile) -> list[dict[str, Any]]:
    bars = (
        ("Compute (SM)", kernel.compute_throughput),
        ("Memory", kernel.memory_throughput),
        ("DRAM", kernel.dram_throughput),
        ("L1/TEX", kernel.l1_throughput),
        ("L2", kernel.l2_throughput),
    )
    return [
        {"label": label, "width": max(0.0, min(value, 100.0)), "text": f"{value:.3g} % of peak"}
        for label, value in bars
        if value is not None
    ]


def _roofline_rows(roofline: RooflinePosition) -> list[list[str]]:
    rows = []
    if roofline.achieved_flops_per_s is not None:
        rows.append(("achieved FLOP/s", f"{roofline.achieved_flops_per_s / 1e12:.3g} TFLOP/s", roofline.flops_percent))
    if roofline.achieved_bytes_per_s is not None:
        rows.append(("achieved DRAM bytes/s", f"{roofline.achieved_bytes_per_s / 1e9:.4g} GB/s", roofline.bytes_percent))
    cells = [[label, value + (f" ({percent:.3g} % of peak)" if percent is not None else "")] for label, value, percent in rows]
    if roofline.intensity is not None:
        side = "memory" if roofline.intensity < roofline.ridge else "compute"
        cells.append(["intensity", f"{roofline.intensity:.3g} FLOP/byte ({side} side of the ridge at {roofline.ridge:.3g})"])
    peaks = roofline.peaks
    figures = f"{peaks.flops_per_s / 1e12:.4g} TFLOP/s, {peaks.bytes_per_s / 1e12:.3g} TB/s"
    return [*cells, ["peaks", f"{peaks.device}: {figures} ({peaks.source})"]]


def _plot(roofline: RooflinePosition) -> dict[str, Any] | None:
    """A log-log roofline's geometry in px (memory and compute roofs from the peaks, the kernel's point); None
    without an achieved FLOP/s at a known intensity."""
    intensity, achieved = roofline.intensity, roofline.achieved_flops_per_s
    if intensity is None or not achieved or intensity <= 0:
        return None
    x_lo = 10 ** math.floor(math.log10(min(intensity, roofline.ridge)) - 1)
    x_hi = 10 ** math.ceil(math.log10(max(intensity, roofline.ridge)) + 1)
    y_hi = 10 ** math.ceil(math.log10(roofline.peaks.flops_per_s) + 0.01)
    y_lo = 10 ** math.floor(math.log10(min(achieved, roofline.roof(x_lo))))
    inner_w = PLOT["width"] - PLOT["left"] - PLOT["right"]
    inner_h = PLOT["height"] - PLOT["top"] - PLOT["bottom"]

    def sx(value: float) -> float:
        return PLOT["left"] + inner_w * math.log10(value / x_lo) / math.log10(x_hi / x_lo)

    def sy(value: float) -> float:
        return PLOT["top"] + inner_h * (1 - math.log10(value / y_lo) / math.log10(y_hi / y_lo))

    x_range = range(round(math.log10(x_lo)), round(math.log10(x_hi)) + 1)
    y_range = range(round(math.log10(y_lo)), round(math.log10(y_hi)) + 1)
    roof = [(x_lo, roofline.roof(x_lo)), (roofline.ridge, roofline.peaks.flops_per_s), (x_hi, roofline.peaks.flops_per_s)]
    return {
        **PLOT,
        "xticks": [{"at": sx(10.0**exponent), "label": f"1e{exponent}"} for exponent in x_range],
        "yticks": [{"at": sy(10.0**exponent), "label": f"1e{exponent}"} for exponent in y_range],
        "roof": [[sx(x), sy(y)] for x, y in roof],
        "point": {
            "x": sx(intensity),
            "y": sy(achieved),
            "label": f"{achieved / 1e12:.3g} TFLOP/s at {intensity:.3g} FLOP/byte",
        },
        "x_title": "FLOP per DRAM byte",
        "y_title": "FLOP/s",
    }


def _occupancy_rows(kernel: KernelProfile) -> list[list[str]]:
    rows = []
    if kernel.achieved_occupancy is not None or kernel.theoretical_occupancy is not None:
        rows.append(["achieved / theoretical", f"{_percent(kernel.achieved_occupancy)} / {_percent(kernel.theoretical_occupancy)}"])
    if kernel.block_limits:
        limits = ", ".join(f"{name} {value:g}" for name, value in kernel.block_limits.items())
        rows.append(["blocks per SM allowed by", f"{limits} (limited by {' and '.join(kernel.occupancy_limiters)})"])
    return rows


def _launch_rows(kernel: KernelProfile) -> list[list[str]]:
    shared = None if kernel.shared_bytes_per_block is None else f"{kernel.shared_bytes_per_block:.0f}"
    facts = (
        ("grid", kernel.grid_size, "blocks"),
        ("block", kernel.block_size, "threads"),
        ("threads", kernel.threads, ""),
        ("registers", kernel.registers_per_thread, "per thread"),
        ("shared memory", shared, "B per block"),
        ("waves per SM", kernel.waves_per_sm, ""),
    )
    return [[label, f"{value} {unit}".strip()] for label, value, unit in facts if value is not None]


def _kernel(kernel: KernelProfile, several: bool) -> dict[str, Any]:
    """A profiled launch's head line and its sections, each ``{"title", "kind", ...}``."""
    sections: list[dict[str, Any]] = []
    if bars := _bars(kernel):
        sections.append({"title": "Speed of Light", "kind": "bars", "bars": bars})
    if kernel.roofline is not None:
        rows, plot = _roofline_rows(kernel.roofline), _plot(kernel.roofline)
        sections.append({"title": "Roofline position", "kind": "roofline", "rows": rows, "plot": plot})
    if rows := _occupancy_rows(kernel):
        sections.append({"title": "Occupancy", "kind": "table", "rows": rows})
    if rows := _launch_rows(kernel):
        sections.append({"title": "Launch", "kind": "table", "rows": rows})
    if kernel.advice:
        advice = [
            {
                "rule": item.rule,
                "kind": item.kind,
                "speedup": f", est. speedup {item.estimated_speedup:.3g} %" if item.estimated_speedup else "",
                "description": item.description,
            }
            for item in kernel.advice
        ]
        sections.append({"title": "Advice (ncu)", "kind": "advice", "advice": advice})
    return {
        "head": f"{kernel.kernel} (launch {kernel.launch})" if several else kernel.kernel,
        "duration": _seconds(kernel.duration_s) if kernel.duration_s is not None else "",
        "sections": sections,
    }


def profile_data(profile: ProfileRecord) -> dict[str, Any]:
    """The tab's data (the reply to ``profile``): per profiled launch its head and sections, the device, the notes."""
    return {
        "kernels": [_kernel(kernel, several=len(profile.kernels) > 1) for kernel in profile.kernels],
        "device": profile.device or "",
        "notes": list(profile.notes),
    }
