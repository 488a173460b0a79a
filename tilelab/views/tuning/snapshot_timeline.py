"""A sweep's timeline as a Gantt chart, an SVG image (:func:`tilelab.views.html.chart`): a row per config, a bar per phase.

Draws the ``timeline`` part of :func:`tilelab.views.tuning.data.tuning_data`
(:mod:`~tilelab.views.tuning.data_timeline` decided every box, tick, label,
colour and tooltip; ``src/widgets/tuning_timeline.ts`` draws the same):
no script, labels HTML-escaped, JupyterLab's colour variables with plain
(light) fallbacks: an image reads only the fallbacks, and a dark theme inverts it.
Each bar has a tooltip with the config, the phase, its length and its lane, and a
row label cut to fit has one with the whole config: an SVG ``<title>``, and a hover
box over the image (an image shows no ``<title>``).
"""

from __future__ import annotations

import html
from typing import Any

from tilelab.views.html import Tip, chart

__all__ = ["timeline_html"]

_FONT = "font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:11px"
_TEXT = "fill:var(--jp-ui-font-color1,#1f2328)"
_MUTED = "fill:var(--jp-ui-font-color2,#6e7781)"
_GRID = "stroke:var(--jp-border-color2,rgba(128,128,128,0.3));stroke-width:1"


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _svg(t: dict[str, Any]) -> str:
    width, height = t["width"], t["height"]
    parts = [
        f"<svg data-tilelab='tuning-timeline' xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' style='{_FONT};max-width:100%'>",
        f"<title>{_esc(t['title'])}</title>",
    ]
    for tick in t["ticks"]:
        parts.append(
            f"<line x1='{tick['x']}' y1='{t['tick_top']}' x2='{tick['x']}' y2='{height}' style='{_GRID}'></line>"
            f"<text x='{tick['x']}' y='{t['tick_text_y']}' text-anchor='middle' style='{_MUTED}'>{_esc(tick['text'])}</text>"
        )
    for row in t["rows"]:
        label = f"<text x='{t['label_x']}' y='{row['y']}' text-anchor='end' style='{_TEXT}'>{_esc(row['text'])}</text>"
        cut = row["text"] != row["label"]
        parts.append(f"<g><title>{_esc(row['label'])}</title>{label}</g>" if cut else label)
    for bar in t["bars"]:
        parts.append(
            f"<rect data-phase='{_esc(bar['phase'])}' x='{bar['x']}' y='{bar['y']}' width='{bar['width']}' height='{bar['height']}' "
            f"style='fill:{_esc(bar['colour'])}'><title>{_esc(bar['tip'])}</title></rect>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _tips(t: dict[str, Any]) -> list[Tip]:
    cut = [(0, row["top"], t["label_x"], row["height"], row["label"]) for row in t["rows"] if row["text"] != row["label"]]
    return cut + [(bar["x"], bar["y"], max(bar["width"], 2), bar["height"], bar["tip"]) for bar in t["bars"]]


def _legend(legend: list[dict[str, str]]) -> str:
    items = [
        f"<span style='display:inline-flex;align-items:center;gap:4px;margin-right:10px'>"
        f"<span style='display:inline-block;width:10px;height:10px;background:{_esc(item['colour'])}'></span>{_esc(item['phase'])}</span>"
        for item in legend
    ]
    return f"<div style='{_FONT};color:var(--jp-ui-font-color2,#6e7781)'>{''.join(items)}</div>"


def timeline_html(timeline: dict[str, Any] | None) -> str:
    """The one-line summary, the Gantt chart and its legend ("" before any phase was recorded)."""
    if timeline is None:
        return ""
    more = f"<div style='{_FONT}'>{_esc(timeline['more'])}</div>" if timeline["more"] else ""
    image = chart(_svg(timeline), timeline["title"], tips=_tips(timeline))
    return (
        f"<div class='tilelab-timeline' style='margin:6px 0'>"
        f"<div data-tilelab='timeline-summary' style='{_FONT};color:var(--jp-ui-font-color1,#1f2328)'>{_esc(timeline['summary'])}</div>"
        f"{image}{more}{_legend(timeline['legend'])}</div>"
    )
