"""How a search went, drawn: best-so-far latency against benchmarks and wall time, and which parameters mattered.

Renders the ``search`` part of :func:`tilelab.views.tuning.data.tuning_data`
(computed by :mod:`tilelab.tune.search_analysis`) as SVG images
(:func:`tilelab.views.html.chart`) in the light fallbacks of JupyterLab's colour
variables, which a dark theme inverts. Every string (parameter names, statuses,
kernel names) is escaped.
"""

from __future__ import annotations

import html
import math
from typing import Any

from tilelab.views.html import Tip, chart
from tilelab.views.text_width import fit

__all__ = ["best_so_far_svg", "importance_svg", "search_html"]

_FONT = "var(--jp-ui-font-family, system-ui, -apple-system, sans-serif)"
_TEXT = "var(--jp-ui-font-color1, #1f2328)"
_MUTED = "var(--jp-ui-font-color2, #57606a)"
_GRID = "var(--jp-border-color2, #d0d7de)"
_LINE = "var(--jp-brand-color1, #0969da)"
_DOT = "var(--jp-content-font-color3, #8c959f)"
_PRUNED = "var(--jp-warn-color1, #bf8700)"
_REFERENCE = "var(--jp-error-color1, #cf222e)"
_BAR = "var(--jp-brand-color2, #54aeff)"
_WIDTH, _HEIGHT = 420, 240
_PAD = {"left": 62, "right": 14, "top": 28, "bottom": 42}


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _ticks(low: float, high: float, log: bool, count: int = 4) -> list[float]:
    if log:
        return [math.exp(math.log(low) + (math.log(high) - math.log(low)) * i / count) for i in range(count + 1)]
    return [low + (high - low) * i / count for i in range(count + 1)]


def _number(value: float) -> str:
    return f"{value:.3g}"


def _frame(title: str, x_label: str, y_label: str, body: list[str]) -> str:
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{_WIDTH}' height='{_HEIGHT}' viewBox='0 0 {_WIDTH} {_HEIGHT}'"
        f" role='img' aria-label='{_esc(title)}' style='font-family:{_FONT};font-size:11px'>"
        f"<text x='{_PAD['left']}' y='16' style='fill:{_TEXT};font-weight:600'>{_esc(title)}</text>"
        f"<text x='{(_WIDTH + _PAD['left']) / 2:.0f}' y='{_HEIGHT - 6}' text-anchor='middle' style='fill:{_MUTED}'>{_esc(x_label)}</text>"
        f"<text transform='translate(12 {(_HEIGHT + _PAD['top']) / 2:.0f}) rotate(-90)' text-anchor='middle' style='fill:{_MUTED}'>{_esc(y_label)}</text>"
        + "".join(body) + "</svg>"
    )  # fmt: skip


def best_so_far_svg(curve: dict[str, Any], reference: float | None = None) -> str:
    """A curve of :func:`~tilelab.views.tuning.data.best_so_far_curve`: dots (pruned ones amber) and the best-so-far step line.

    The y axis is logarithmic when latencies spread wide; ``reference`` (ms) is a dashed line.
    """
    return _best_so_far(curve, reference)[0]


def _best_so_far(curve: dict[str, Any], reference: float | None) -> tuple[str, list[Tip]]:
    """:func:`best_so_far_svg`, and a hover box for each dot and for the reference line."""
    points, steps = curve["points"], curve["steps"]
    title, x_label = f"best so far vs {curve['label']}", curve["label"]
    if not points:
        return _frame(title, x_label, "latency (ms)", [f"<text x='{_PAD['left']}' y='60' style='fill:{_MUTED}'>no benchmarks yet</text>"]), []
    ys = [y for _, y, _ in points] + ([reference] if reference else [])
    low, high = min(ys), max(ys)
    log = high / low > 5
    if high == low:
        low, high = low * 0.9, high * 1.1
    xs = [x for x, _, _ in points]
    x_low, x_high = min(0.0, min(xs)), max(xs) or 1.0
    width, height = _WIDTH - _PAD["left"] - _PAD["right"], _HEIGHT - _PAD["top"] - _PAD["bottom"]

    def sx(x: float) -> float:
        return _PAD["left"] + width * (x - x_low) / max(x_high - x_low, 1e-12)

    def sy(y: float) -> float:
        share = (math.log(y) - math.log(low)) / (math.log(high) - math.log(low)) if log else (y - low) / (high - low)
        return _PAD["top"] + height * (1.0 - share)

    body, tips = [], []
    for tick in _ticks(low, high, log):
        body.append(f"<line x1='{_PAD['left']}' x2='{_WIDTH - _PAD['right']}' y1='{sy(tick):.1f}' y2='{sy(tick):.1f}' style='stroke:{_GRID};stroke-width:1'/>")
        body.append(f"<text x='{_PAD['left'] - 6}' y='{sy(tick) + 4:.1f}' text-anchor='end' style='fill:{_MUTED}'>{_number(tick)}</text>")
    for tick in _ticks(x_low, x_high, False):
        body.append(f"<text x='{sx(tick):.1f}' y='{_HEIGHT - _PAD['bottom'] + 14}' text-anchor='middle' style='fill:{_MUTED}'>{_number(tick)}</text>")
    if reference:
        body.append(f"<line x1='{_PAD['left']}' x2='{_WIDTH - _PAD['right']}' y1='{sy(reference):.1f}' y2='{sy(reference):.1f}' style='stroke:{_REFERENCE};stroke-dasharray:4 3'><title>reference {_number(reference)} ms</title></line>")
        tips.append((_PAD["left"], sy(reference) - 3, width, 6, f"reference {_number(reference)} ms"))
    for x, y, status in points:
        colour = _PRUNED if status == "pruned" else _DOT
        body.append(f"<circle cx='{sx(x):.1f}' cy='{sy(y):.1f}' r='2.5' style='fill:{colour}'><title>{_esc(status)}: {_number(y)} ms</title></circle>")
        tips.append((sx(x) - 4, sy(y) - 4, 8, 8, f"{status}: {_number(y)} ms"))
    if steps:
        path = f"M{sx(steps[0][0]):.1f} {sy(steps[0][1]):.1f}"
        path += "".join(f" H{sx(x):.1f} V{sy(y):.1f}" for x, y in steps[1:]) + f" H{sx(x_high):.1f}"
        body.append(f"<path d='{path}' style='fill:none;stroke:{_LINE};stroke-width:2'/>")
    return _frame(title, x_label, f"latency (ms{', log' if log else ''})", body), tips


def importance_svg(importance: dict[str, Any]) -> str:
    """Parameter importance (``shares``: [name, share] pairs, and the ``method``) as horizontal bars, largest first."""
    return _importance(importance)[0]


def _importance(importance: dict[str, Any]) -> tuple[str, list[Tip]]:
    """:func:`importance_svg`, and a hover box for each bar."""
    shares, method = importance["shares"], importance["method"]
    title = f"parameter importance ({method})" if shares else "parameter importance"
    axis = "share of variance" + (" (scikit-learn gives fANOVA)" if method == "main effects" else "")
    if not shares:
        return _frame(title, axis, "", [f"<text x='{_PAD['left']}' y='60' style='fill:{_MUTED}'>{_esc(method)}</text>"]), []
    label_width, bar_height = 110, 18
    width = _WIDTH - label_width - _PAD["right"] - 40
    body, tips = [], []
    for i, (name, value) in enumerate(sorted(shares, key=lambda pair: pair[1], reverse=True)):
        y = _PAD["top"] + 8 + i * (bar_height + 6)
        share = max(0.0, min(1.0, value))
        body.append(f"<text x='{label_width - 6}' y='{y + 13}' text-anchor='end' style='fill:{_TEXT}'>{_esc(fit(name, label_width - 10))}</text>")
        body.append(f"<rect x='{label_width}' y='{y}' width='{max(1.0, width * share):.1f}' height='{bar_height}' style='fill:{_BAR}'><title>{_esc(name)}: {share:.3f}</title></rect>")
        tips.append((0, y, label_width + max(1.0, width * share), bar_height, f"{name}: {share:.3f}"))
        body.append(f"<text x='{label_width + width * share + 4:.1f}' y='{y + 13}' style='fill:{_MUTED}'>{share:.2f}</text>")
    return _frame(title, axis, "", body), tips


def search_html(search: dict[str, Any]) -> str:
    """The three charts and a line saying how the configs were chosen, as one script-free HTML block."""
    line = (
        f"<b>{_esc(search['kernel'])}</b>: {_esc(search['how'])}; "
        f"{search['measured']} configs measured of {search['space']} in the space"
    )
    drawn = [(_best_so_far(curve, search["reference"]), f"best so far vs {curve['label']}") for curve in search["curves"]]
    drawn.append((_importance(search["importance"]), "parameter importance"))
    charts = [chart(svg, alt, tips=tips) for (svg, tips), alt in drawn]
    figures = "".join(f"<div style='flex:0 0 auto'>{figure}</div>" for figure in charts)
    return (
        f"<div class='tilelab-search' style='font-family:{_FONT};color:{_TEXT}'>"
        f"<div style='margin:4px 0'>{line}</div><div style='display:flex;flex-wrap:wrap;gap:12px'>{figures}</div></div>"
    )
