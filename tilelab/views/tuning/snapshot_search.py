"""How a search went, drawn: the ``search`` part of the Tuning tab's data as script-free HTML.

Draws the charts :mod:`tilelab.views.tuning.data_search` laid out (best-so-far
latency against benchmarks and wall time, and which parameters mattered) as SVG
images (:func:`tilelab.views.html.chart`) with a hover box for each mark that
has a tooltip; ``src/widgets/tuning_search.ts`` draws the same marks live. The
colours are JupyterLab's variables, whose light fallbacks an image shows (a dark
theme inverts it). Every string (parameter names, statuses, kernel names) is escaped.
"""

from __future__ import annotations

import html
from typing import Any

from tilelab.views.html import Tip, chart

__all__ = ["chart_svg", "search_html"]

_FONT = "var(--jp-ui-font-family, system-ui, -apple-system, sans-serif)"
_TEXT = "var(--jp-ui-font-color1, #1f2328)"


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _title(mark: dict[str, Any]) -> str:
    return f"<title>{_esc(mark['tip'])}</title>" if mark.get("tip") else ""


def _mark(mark: dict[str, Any]) -> str:
    kind = mark["mark"]
    if kind == "text":
        weight = ";font-weight:600" if mark["bold"] else ""
        where = (
            f"transform='translate({mark['x']} {mark['y']}) rotate({mark['rotate']})'" if mark["rotate"]
            else f"x='{mark['x']}' y='{mark['y']}'"
        )  # fmt: skip
        anchor = f" text-anchor='{_esc(mark['anchor'])}'" if mark["anchor"] != "start" else ""
        return f"<text {where}{anchor} style='fill:{_esc(mark['colour'])}{weight}'>{_esc(mark['text'])}</text>"
    if kind == "line":
        dash = f";stroke-dasharray:{_esc(mark['dash'])}" if mark["dash"] else ";stroke-width:1"
        return (
            f"<line x1='{mark['x1']}' x2='{mark['x2']}' y1='{mark['y1']}' y2='{mark['y2']}' "
            f"style='stroke:{_esc(mark['colour'])}{dash}'>{_title(mark)}</line>"
        )
    if kind == "dot":
        return f"<circle cx='{mark['x']}' cy='{mark['y']}' r='{mark['r']}' style='fill:{_esc(mark['colour'])}'>{_title(mark)}</circle>"
    if kind == "path":
        return f"<path d='{_esc(mark['d'])}' style='fill:none;stroke:{_esc(mark['colour'])};stroke-width:{mark['width']}'/>"
    if kind == "rect":
        return (
            f"<rect x='{mark['x']}' y='{mark['y']}' width='{mark['width']}' height='{mark['height']}' "
            f"style='fill:{_esc(mark['colour'])}'>{_title(mark)}</rect>"
        )
    raise ValueError(f"unknown mark {kind!r}")


def chart_svg(layout: dict[str, Any]) -> tuple[str, list[Tip]]:
    """One chart of the data (``width``, ``height``, ``title``, ``marks``) as an SVG document, and its hover boxes."""
    width, height = layout["width"], layout["height"]
    svg = (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' viewBox='0 0 {width} {height}'"
        f" role='img' aria-label='{_esc(layout['title'])}' style='font-family:{_FONT};font-size:11px'>"
        + "".join(_mark(mark) for mark in layout["marks"]) + "</svg>"
    )  # fmt: skip
    tips = [(*mark["box"], mark["tip"]) for mark in layout["marks"] if mark.get("tip") and mark.get("box")]
    return svg, tips


def search_html(search: dict[str, Any]) -> str:
    """The charts and a line saying how the configs were chosen, as one script-free HTML block."""
    line = (
        f"<b>{_esc(search['kernel'])}</b>: {_esc(search['how'])}; "
        f"{search['measured']} configs measured of {search['space']} in the space"
    )
    figures = "".join(f"<div style='flex:0 0 auto'>{_figure(layout)}</div>" for layout in search["charts"])
    return (
        f"<div class='tilelab-search' style='font-family:{_FONT};color:{_TEXT}'>"
        f"<div style='margin:4px 0'>{line}</div><div style='display:flex;flex-wrap:wrap;gap:12px'>{figures}</div></div>"
    )


def _figure(layout: dict[str, Any]) -> str:
    svg, tips = chart_svg(layout)
    return chart(svg, layout["title"], tips=tips)
