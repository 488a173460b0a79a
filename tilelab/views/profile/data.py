"""The Profile tab's data, the only code that shapes it: one ncu run of a kernel as, per profiled launch, a head
line and its sections (Speed of Light bars, the roofline position with the plot's geometry, where the warps
were by cell line and by CUDA line, occupancy, launch, ncu's advice); sections with nothing to show are left
out. Every label and number is formatted here, and the roofline plot's coordinates are computed here, so the
snapshot and the live tab draw the same picture.
"""

from __future__ import annotations

import math
from typing import Any

from tilelab.counters.stalls import LineSamples, PlacedSamples, place_samples
from tilelab.records import KernelRecord
from tilelab.records.profile import KernelProfile, RooflinePosition
from tilelab.views.lines import quoted_line

__all__ = ["PLOT", "STALL_REASONS", "profile_data"]

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


# ncu's stall reasons (the ``stall_`` columns of its source page): a name for the table, what it means for a tooltip.
STALL_REASONS = {
    "barrier": ("barrier", "waiting for the block's other warps at a barrier (bar.sync, __syncthreads)"),
    "branch_resolving": ("branch resolving", "waiting for a branch's target to be computed"),
    "dispatch": ("dispatch", "selected, but the dispatcher held the instruction back"),
    "drain": ("drain", "after EXIT, waiting for the warp's memory writes to drain"),
    "imc": ("constant cache miss", "waiting for an immediate-constant cache miss"),
    "lg": ("LG throttle", "the queue for local and global memory instructions is full"),
    "long_sb": ("long scoreboard", "waiting on a result of an L1TEX operation (global, local, surface or texture memory)"),
    "math": ("math pipe throttle", "the execution pipe the instruction needs is busy"),
    "membar": ("memory barrier", "waiting on a memory barrier"),
    "mio": ("MIO throttle", "the queue for memory input/output instructions (shared memory, special math) is full"),
    "misc": ("misc", "a hardware reason ncu does not name"),
    "no_inst": ("no instruction", "waiting for an instruction to be fetched (or an instruction cache miss)"),
    "not_selected": ("not selected", "ready, but the scheduler issued another warp's instruction"),
    "selected": ("selected", "issuing: not a stall"),
    "short_sb": ("short scoreboard", "waiting on a result of an MIO operation (shared memory, special math)"),
    "sleep": ("sleeping", "the warp's threads are sleeping or yielded"),
    "tex": ("texture throttle", "the queue for texture instructions is full"),
    "wait": ("fixed-latency wait", "waiting on a fixed-latency dependency"),
}
_TOP_CUDA_LINES = 12
_ABOUT_SAMPLES = (
    "ncu sampled the state of each SM's warps at a fixed interval: a line's share is the share of samples that "
    "found a warp at its instructions, and the reasons say why those warps were not issuing."
)
_ABOUT_WARPS = (
    "The kernel is warp-specialised: 'warps' says whose code the samples were at, the producer's (its TMA loads), "
    "the consumers' (the math and the epilogue) or all warps' (outside the split)."
)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "—"


def _warps(line: LineSamples) -> list[str]:
    """Whose code the line's samples were at: ``["consumer"]``, or ``["producer 54 %", "consumer 46 %"]`` (empty
    unless the kernel is warp-specialised)."""
    if len(line.by_role) == 1:
        return [line.by_role[0][0]]
    return [f"{role} {_share(count, line.samples)}" for role, count in line.by_role]


def _sampled_row(line: LineSamples, total: int, code: str) -> dict[str, Any]:
    """One line's row: its number, code, share of the launch's samples, whose warps they were (in a
    warp-specialised kernel) and its three biggest stall reasons."""
    reasons = []
    for name, count in line.reasons[:3]:
        label, meaning = STALL_REASONS.get(name, (name, f"ncu's stall reason {name}"))
        reasons.append([label, _share(count, line.samples), meaning])
    return {
        "line": "—" if line.line is None else str(line.line),
        "code": code,
        "width": 100 * line.samples / total if total else 0.0,
        "share": _share(line.samples, total),
        "samples": line.samples,
        "warps": _warps(line),
        "reasons": reasons,
    }


def _no_cell_line(placed: PlacedSamples, device: list[str]) -> str:
    """The code column of the samples on no cell line: its busiest CUDA line, and what code no cell line wrote is."""
    cell_line_of = placed.cell_line_of or {}
    busiest = next((line.line for line in placed.by_cuda_line if line.line and cell_line_of.get(line.line) is None), None)
    if busiest is None:
        return "no cell line"
    return (
        f"no cell line · its busiest CUDA line, {busiest}: {quoted_line(device, busiest, 60)} "
        "(code TileLang wrote for the kernel as a whole: set-up, barriers, warp-specialisation branches)"
    )


def _samples_section(record: KernelRecord, placed: PlacedSamples) -> dict[str, Any]:
    """Where the warps were: the launch's samples by cell line and by CUDA line (the most first), or why not."""
    section = {
        "title": f"Where the warps were ({placed.samples} samples)",
        "kind": "samples",
        "about": _ABOUT_SAMPLES,
        "summary": "",
        "cell": [],
        "cuda": [],
        "warps": False,  # whether the rows say whose warps their samples were (a warp-specialised kernel)
        "note": placed.unplaced,
    }
    if placed.unplaced:
        return section
    if any(line.by_role for line in placed.by_cell_line):
        section["warps"] = True
        section["about"] = f"{_ABOUT_SAMPLES} {_ABOUT_WARPS}"
    cell = record.source.kernel_source.splitlines() if record.source is not None else []
    device = record.source.device.splitlines() if record.source is not None else []
    cell_line_of = placed.cell_line_of or {}
    section["cell"] = [
        _sampled_row(line, placed.samples, quoted_line(cell, line.line, 80) if line.line else _no_cell_line(placed, device))
        for line in placed.by_cell_line
    ]
    for line in placed.by_cuda_line[:_TOP_CUDA_LINES]:
        row = _sampled_row(line, placed.samples, quoted_line(device, line.line, 100) if line.line else "no CUDA line")
        at = cell_line_of.get(line.line) if line.line is not None else None
        row["cell"] = f"{at}: {quoted_line(cell, at, 60)}" if at is not None else "—"
        section["cuda"].append(row)
    top = next((row for row in section["cell"] if row["line"] != "—"), None)
    if top is not None:
        reason = f", {top['reasons'][0][1]} of them {top['reasons'][0][0]}" if top["reasons"] else ""
        section["summary"] = f"Cell line {top['line']} has {top['share']} of the samples{reason}: {top['code']}"
    return section


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


def _kernel(record: KernelRecord, kernel: KernelProfile, several: bool) -> dict[str, Any]:
    """A profiled launch's head line and its sections, each ``{"title", "kind", ...}``."""
    sections: list[dict[str, Any]] = []
    if bars := _bars(kernel):
        sections.append({"title": "Speed of Light", "kind": "bars", "bars": bars})
    if kernel.roofline is not None:
        rows, plot = _roofline_rows(kernel.roofline), _plot(kernel.roofline)
        sections.append({"title": "Roofline position", "kind": "roofline", "rows": rows, "plot": plot})
    if (placed := place_samples(record, kernel)) is not None:
        sections.append(_samples_section(record, placed))
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


def profile_data(record: KernelRecord) -> dict[str, Any]:
    """The tab's data (the reply to ``profile``) for a record with a profile: per profiled launch its head and
    sections, the device, the notes."""
    profile = record.profile
    if profile is None:
        raise ValueError(f"{record.name} has no ncu profile (%%tilelang --profile attaches one)")
    return {
        "kernels": [_kernel(record, kernel, several=len(profile.kernels) > 1) for kernel in profile.kernels],
        "device": profile.device or "",
        "notes": list(profile.notes),
    }
