"""The Profile tab: one ncu run of a kernel — Speed of Light bars, the roofline position, occupancy, launch, advice.

Static, script-free HTML (every kernel name and advice text escaped) from a
:class:`~tilelab.records.ProfileRecord`; the Explorer shows it as an
HTML tab and as a ``<details>`` section of its snapshot. Colours come from
JupyterLab's theme variables (with light fallbacks), so dark themes work.
"""

from __future__ import annotations

import math

from tilelab.records.profile import KernelProfile, ProfileRecord, RooflinePosition
from tilelab.views.html import escape, table

__all__ = ["profile_html", "roofline_svg"]

_BOX = "font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;line-height:1.4"
_TEXT = "var(--jp-ui-font-color1,#1f2328)"
_MUTED = "var(--jp-ui-font-color2,#57606a)"
_GRID = "var(--jp-border-color2,#d0d7de)"
_TRACK = "var(--jp-layout-color3,#d0d7de)"
_ROOF = "var(--jp-brand-color1,#0969da)"
_POINT = "var(--jp-error-color1,#cf222e)"
_WARN = "var(--jp-warn-color1,#9a6700)"
_WIDTH, _HEIGHT, _PAD = 360, 220, {"left": 58, "right": 12, "top": 12, "bottom": 34}


def profile_html(profile: ProfileRecord) -> str:
    """The Profile tab's HTML: a block per profiled launch, then the notes."""
    parts = [f"<div data-tilelab='profile' style='{_BOX};color:{_TEXT}'>"]
    parts += [_kernel_html(kernel, several=len(profile.kernels) > 1) for kernel in profile.kernels]
    if not profile.kernels:
        parts.append(f"<div style='color:{_MUTED}'>ncu profiled no launch of this kernel</div>")
    if profile.device:
        parts.append(f"<div style='color:{_MUTED}'>ran on {escape(profile.device)}</div>")
    parts += [f"<div data-tilelab='profile-note' style='color:{_MUTED}'>{escape(note)}</div>" for note in profile.notes]
    return "".join(parts) + "</div>"


def _kernel_html(kernel: KernelProfile, several: bool) -> str:
    head = f"{kernel.kernel} (launch {kernel.launch})" if several else kernel.kernel
    duration = f" — {_seconds(kernel.duration_s)}" if kernel.duration_s is not None else ""
    return (
        f"<div data-tilelab='profile-kernel' style='margin:4px 0 10px 0'>"
        f"<div style='font-weight:600'>{escape(head)}{escape(duration)}</div>"
        + _section("Speed of Light", _sol_bars(kernel))
        + _section("Roofline position", _roofline_html(kernel.roofline))
        + _section("Occupancy", _occupancy_html(kernel))
        + _section("Launch", _launch_html(kernel))
        + _section("Advice (ncu)", _advice_html(kernel))
        + "</div>"
    )


def _section(title: str, body: str) -> str:
    if not body:
        return ""
    return f"<div style='margin-top:6px'><div style='font-weight:600;color:{_MUTED}'>{escape(title)}</div>{body}</div>"


def _sol_bars(kernel: KernelProfile) -> str:
    bars = (
        ("Compute (SM)", kernel.compute_throughput),
        ("Memory", kernel.memory_throughput),
        ("DRAM", kernel.dram_throughput),
        ("L1/TEX", kernel.l1_throughput),
        ("L2", kernel.l2_throughput),
    )
    return "".join(_bar(label, value) for label, value in bars if value is not None)


def _bar(label: str, percent: float) -> str:
    width = max(0.0, min(percent, 100.0))
    return (
        f"<div data-tilelab='sol-bar' style='display:flex;align-items:center;gap:8px'>"
        f"<span style='width:100px;color:{_MUTED}'>{escape(label)}</span>"
        f"<span style='flex:0 0 240px;height:8px;background:{_TRACK};border-radius:4px'>"
        f"<span style='display:block;height:8px;width:{width:.1f}%;background:{_ROOF};border-radius:4px'></span></span>"
        f"<span>{percent:.3g} % of peak</span></div>"
    )


def _roofline_html(roofline: RooflinePosition | None) -> str:
    if roofline is None:
        return ""
    rows = []
    if roofline.achieved_flops_per_s is not None:
        rows.append(("achieved FLOP/s", f"{roofline.achieved_flops_per_s / 1e12:.3g} TFLOP/s", roofline.flops_percent))
    if roofline.achieved_bytes_per_s is not None:
        rows.append(("achieved DRAM bytes/s", f"{roofline.achieved_bytes_per_s / 1e9:.4g} GB/s", roofline.bytes_percent))
    cells = [
        (escape(label), escape(value + (f" ({percent:.3g} % of peak)" if percent is not None else "")))
        for label, value, percent in rows
    ]
    if roofline.intensity is not None:
        side = "memory" if roofline.intensity < roofline.ridge else "compute"
        text = f"{roofline.intensity:.3g} FLOP/byte ({side} side of the ridge at {roofline.ridge:.3g})"
        cells.append(("intensity", escape(text)))
    peaks = (
        f"{roofline.device}: {roofline.peak_flops / 1e12:.4g} TFLOP/s, {roofline.peak_bytes / 1e12:.3g} TB/s "
        f"({roofline.peaks_source})"
    )
    cells.append(("peaks", escape(peaks)))
    return table(cells, attrs=" data-tilelab='roofline'") + roofline_svg(roofline)


def roofline_svg(roofline: RooflinePosition) -> str:
    """A small log-log roofline (memory and compute roofs from the peaks) with the kernel's point; '' without one."""
    intensity, achieved = roofline.intensity, roofline.achieved_flops_per_s
    if intensity is None or not achieved or intensity <= 0:
        return ""
    x_lo = 10 ** math.floor(math.log10(min(intensity, roofline.ridge)) - 1)
    x_hi = 10 ** math.ceil(math.log10(max(intensity, roofline.ridge)) + 1)
    y_hi = 10 ** math.ceil(math.log10(roofline.peak_flops) + 0.01)
    y_lo = 10 ** math.floor(math.log10(min(achieved, roofline.roof(x_lo))))
    inner_w = _WIDTH - _PAD["left"] - _PAD["right"]
    inner_h = _HEIGHT - _PAD["top"] - _PAD["bottom"]

    def sx(value: float) -> float:
        return _PAD["left"] + inner_w * math.log10(value / x_lo) / math.log10(x_hi / x_lo)

    def sy(value: float) -> float:
        return _PAD["top"] + inner_h * (1 - math.log10(value / y_lo) / math.log10(y_hi / y_lo))

    body = []
    for exponent in range(round(math.log10(x_lo)), round(math.log10(x_hi)) + 1):
        x = sx(10.0**exponent)
        body.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{_PAD['top']}' y2='{_HEIGHT - _PAD['bottom']}' style='stroke:{_GRID}'/>")
        body.append(f"<text x='{x:.1f}' y='{_HEIGHT - _PAD['bottom'] + 13}' text-anchor='middle' style='fill:{_MUTED}'>1e{exponent}</text>")
    for exponent in range(round(math.log10(y_lo)), round(math.log10(y_hi)) + 1):
        y = sy(10.0**exponent)
        body.append(f"<line x1='{_PAD['left']}' x2='{_WIDTH - _PAD['right']}' y1='{y:.1f}' y2='{y:.1f}' style='stroke:{_GRID}'/>")
        body.append(f"<text x='{_PAD['left'] - 4}' y='{y + 4:.1f}' text-anchor='end' style='fill:{_MUTED}'>1e{exponent}</text>")
    roof = [(x_lo, roofline.roof(x_lo)), (roofline.ridge, roofline.peak_flops), (x_hi, roofline.peak_flops)]
    path = " ".join(f"{'M' if k == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for k, (x, y) in enumerate(roof))
    body.append(f"<path data-tilelab='roof' d='{path}' style='fill:none;stroke:{_ROOF};stroke-width:2'/>")
    label = f"{achieved / 1e12:.3g} TFLOP/s at {intensity:.3g} FLOP/byte"
    body.append(
        f"<circle data-tilelab='roofline-point' cx='{sx(intensity):.1f}' cy='{sy(achieved):.1f}' r='4' "
        f"style='fill:{_POINT}'><title>{escape(label)}</title></circle>"
    )
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{_WIDTH}' height='{_HEIGHT}' viewBox='0 0 {_WIDTH} {_HEIGHT}' "
        f"data-tilelab='roofline-plot' style='{_BOX};font-size:10px' role='img' aria-label='{escape(label)}'>"
        + "".join(body)
        + f"<text x='{(_WIDTH + _PAD['left']) / 2:.0f}' y='{_HEIGHT - 4}' text-anchor='middle' style='fill:{_MUTED}'>"
        "FLOP per DRAM byte</text>"
        f"<text transform='translate(10 {(_HEIGHT + _PAD['top'] - _PAD['bottom']) / 2:.0f}) rotate(-90)' "
        f"text-anchor='middle' style='fill:{_MUTED}'>FLOP/s</text></svg>"
    )


def _occupancy_html(kernel: KernelProfile) -> str:
    rows = []
    if kernel.achieved_occupancy is not None or kernel.theoretical_occupancy is not None:
        rows.append(("achieved / theoretical", f"{_percent(kernel.achieved_occupancy)} / {_percent(kernel.theoretical_occupancy)}"))
    if kernel.block_limits:
        limits = ", ".join(f"{name} {value:g}" for name, value in kernel.block_limits.items())
        rows.append(("blocks per SM allowed by", f"{limits} (limited by {' and '.join(kernel.occupancy_limiters)})"))
    return table([(escape(label), escape(value)) for label, value in rows]) if rows else ""


def _launch_html(kernel: KernelProfile) -> str:
    facts = (
        ("grid", kernel.grid_size, "blocks"),
        ("block", kernel.block_size, "threads"),
        ("threads", kernel.threads, ""),
        ("registers", kernel.registers_per_thread, "per thread"),
        ("shared memory", None if kernel.shared_bytes_per_block is None else f"{kernel.shared_bytes_per_block:.0f}", "B per block"),
        ("waves per SM", kernel.waves_per_sm, ""),
    )
    rows = [(escape(label), escape(f"{value} {unit}".strip())) for label, value, unit in facts if value is not None]
    return table(rows) if rows else ""


def _advice_html(kernel: KernelProfile) -> str:
    if not kernel.advice:
        return ""
    items = []
    for advice in kernel.advice:
        speedup = f", est. speedup {advice.estimated_speedup:.3g} %" if advice.estimated_speedup else ""
        items.append(
            f"<li data-tilelab='advice'><b>{escape(advice.rule)}</b> "
            f"<span style='color:{_WARN}'>{escape(advice.kind)}{escape(speedup)}</span><br>"
            f"<span>{escape(advice.description)}</span></li>"
        )
    return f"<ol style='margin:2px 0;padding-left:20px'>{''.join(items)}</ol>"


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g} %"


def _seconds(value: float) -> str:
    return f"{value * 1e3:.4g} ms" if value >= 1e-3 else f"{value * 1e6:.4g} µs"
