"""A sweep's timeline as a Gantt chart: one row per config, one bar per phase, in inline SVG.

Renders the ``timeline`` part of :func:`tilelab.views.tuning.data.tuning_data`;
the same markup serves the live tuning view (rebuilt as rows arrive) and the
static snapshot: no script, labels HTML-escaped, colours from JupyterLab's CSS
variables with plain fallbacks (light and dark both read). Rows are configs in
the order they were taken from the feed; a sweep of more configs than the data
holds says how many are left out. Each bar has a tooltip (SVG ``<title>``) with
the config, the phase, its length and its lane.
"""

from __future__ import annotations

import html
import math
from typing import Any

__all__ = ["PHASE_COLOURS", "timeline_html"]

PHASE_COLOURS = {
    "queued": "var(--jp-layout-color3,#d0d7de)",
    "compiling": "var(--jp-brand-color1,#0969da)",
    "compiled": "var(--jp-brand-color2,#64b5f6)",
    "waiting": "var(--jp-warn-color2,#e3b341)",
    "checking": "var(--jp-success-color2,#81c784)",
    "benchmarking": "var(--jp-success-color1,#2da44e)",
    "confirming": "var(--jp-error-color2,#e57373)",
    "rebenchmarking": "var(--jp-info-color0,#006064)",
}
_FONT = "font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:11px"
_TEXT = "fill:var(--jp-ui-font-color1,#1f2328)"
_MUTED = "fill:var(--jp-ui-font-color2,#6e7781)"
_WIDTH, _LABEL, _ROW, _GAP, _AXIS = 760, 170, 10, 3, 18
_LABEL_CHARS = 28


def _short(label: str) -> str:
    return label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1] + "…"


def _ticks(wall: float) -> list[float]:
    """Round tick values over [0, wall]: 4 to 8 of them."""
    if wall <= 0:
        return [0.0]
    step = 10 ** math.floor(math.log10(wall / 4))
    for factor in (1, 2, 5, 10):
        if wall / (step * factor) <= 8:
            step *= factor
            break
    return [i * step for i in range(int(wall / step) + 1)]


def _svg(timeline: dict[str, Any]) -> str:
    wall = max(timeline["wall_s"], 1e-6)
    scale = (_WIDTH - _LABEL - 10) / wall
    labels = {row["index"]: row["label"] for row in timeline["rows"]}
    rows = {index: position for position, index in enumerate(labels)}
    height = _AXIS + len(rows) * (_ROW + _GAP) + 4
    parts = [
        f"<svg data-tilelab='tuning-timeline' xmlns='http://www.w3.org/2000/svg' width='{_WIDTH}' height='{height}' "
        f"viewBox='0 0 {_WIDTH} {height}' role='img' style='{_FONT};max-width:100%'>",
        f"<title>timeline of {html.escape(timeline['kernel'])}: one row per config, seconds from the tune() call</title>",
    ]
    for tick in _ticks(wall):
        x = _LABEL + tick * scale
        parts.append(
            f"<line x1='{x:.1f}' y1='{_AXIS - 4}' x2='{x:.1f}' y2='{height}' "
            "style='stroke:var(--jp-border-color2,rgba(128,128,128,0.3));stroke-width:1'></line>"
            f"<text x='{x:.1f}' y='{_AXIS - 7}' text-anchor='middle' style='{_MUTED}'>{tick:g} s</text>"
        )
    for index, position in rows.items():
        y = _AXIS + position * (_ROW + _GAP)
        parts.append(
            f"<text x='{_LABEL - 6}' y='{y + _ROW - 1}' text-anchor='end' style='{_TEXT}'>{html.escape(_short(labels[index]))}</text>"
        )
    for index, phase, start, end, lane in timeline["spans"]:
        if index not in rows:
            continue
        duration = end - start
        y = _AXIS + rows[index] * (_ROW + _GAP)
        x, width = _LABEL + start * scale, max(duration * scale, 1.0)
        tip = f"{labels[index]}: {phase} {duration:.3g} s" + (f" ({lane})" if lane else "")
        parts.append(
            f"<rect data-phase='{html.escape(phase)}' x='{x:.1f}' y='{y}' width='{width:.1f}' height='{_ROW}' "
            f"style='fill:{PHASE_COLOURS[phase]}'><title>{html.escape(tip)}</title></rect>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _legend(phases: list[str]) -> str:
    items = [
        f"<span style='display:inline-flex;align-items:center;gap:4px;margin-right:10px'>"
        f"<span style='display:inline-block;width:10px;height:10px;background:{PHASE_COLOURS[p]}'></span>{html.escape(p)}</span>"
        for p in phases
    ]
    return f"<div style='{_FONT};color:var(--jp-ui-font-color2,#6e7781)'>{''.join(items)}</div>"


def timeline_html(timeline: dict[str, Any] | None) -> str:
    """The one-line summary, the Gantt chart and its legend ("" before any phase was recorded)."""
    if timeline is None:
        return ""
    left_out = timeline["left_out"]
    summary = html.escape(timeline["summary"])
    more = f"<div style='{_FONT}'>… {left_out} more configs not drawn (result.timeline() has them all)</div>" if left_out > 0 else ""
    return (
        f"<div class='tilelab-timeline' style='margin:6px 0'>"
        f"<div data-tilelab='timeline-summary' style='{_FONT};color:var(--jp-ui-font-color1,#1f2328)'>{summary}</div>"
        f"{_svg(timeline)}{more}{_legend(timeline['phases'])}</div>"
    )
