"""The Tuning tab's snapshot: script-free HTML rendered from :func:`tilelab.views.tuning.data.tuning_data`'s dict alone.

The same pieces fill the live widget (``ipywidgets.HTML``, updated in place).
Colours come from JupyterLab's CSS variables with plain fallbacks, so light and
dark themes both read; heat-map cells carry their own background and a text
colour chosen for it. The re-benchmark's verdict ("best by 2 % (± 0.3 %)", or
a tie) is said under the progress bars, and the rows mark the best (★) and the
configs tied with it (≈). Every string is escaped.
"""

from __future__ import annotations

import html
import numbers
from typing import Any

from tilelab.views.tuning.snapshot_search import search_html
from tilelab.views.tuning.snapshot_timeline import timeline_html

__all__ = ["heat_colour", "live_pieces", "pivot_html", "progress_html", "rows_html", "search_html", "timeline_html", "tuning_html"]

_BOX = "font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;line-height:1.4"
_MUTED = "color:var(--jp-ui-font-color2,#6e7781)"
_CELL = "padding:2px 10px;border-bottom:1px solid var(--jp-border-color2,rgba(128,128,128,0.3));white-space:nowrap"
_OK, _ERROR = "var(--jp-success-color1,#2da44e)", "var(--jp-error-color1,#d1242f)"
_BARS = {"compiled": "var(--jp-brand-color1,#0969da)", "benchmarked": _OK, "failed": _ERROR}
_STATUS_COLOURS = {
    "ok": _OK,
    "compile_error": _ERROR,
    "run_error": _ERROR,
    "mismatch": "var(--jp-warn-color1,#bf8700)",
    "timeout": "#8250df",
}
# Viridis, reversed (fast = bright): ten stops, interpolated linearly.
_HEAT = ((253, 231, 37), (181, 222, 43), (110, 206, 88), (53, 183, 121), (31, 158, 137),
         (38, 130, 142), (49, 104, 142), (62, 73, 137), (72, 40, 120), (68, 1, 84))  # fmt: skip


def tuning_html(data: dict[str, Any]) -> str:
    """The whole snapshot: progress, heat map, search charts, timeline and rows."""
    search = search_html(data["search"]) if data["search"] is not None else ""
    return (
        f"<div class='tilelab-tuning'>{progress_html(data['progress'])}{pivot_html(data['pivot'])}{search}"
        f"{timeline_html(data['timeline'])}{rows_html(data['rows'])}</div>"
    )


def live_pieces(data: dict[str, Any]) -> list[str]:
    """The live widget's parts, in order: progress, heat map, timeline, rows (the search charts are the snapshot's only)."""
    return [progress_html(data["progress"]), pivot_html(data["pivot"]), timeline_html(data["timeline"]), rows_html(data["rows"])]


def heat_colour(fraction: float) -> tuple[str, str]:
    """Background and text colour of a heat cell at ``fraction`` (0 fastest .. 1 slowest)."""
    position = min(max(fraction, 0.0), 1.0) * (len(_HEAT) - 1)
    low = int(position)
    high, weight = min(low + 1, len(_HEAT) - 1), position - int(position)
    red, green, blue = (round(a + (b - a) * weight) for a, b in zip(_HEAT[low], _HEAT[high], strict=True))
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    return f"#{red:02x}{green:02x}{blue:02x}", "#111111" if luminance > 140 else "#f6f8fa"


def progress_html(progress: dict[str, Any]) -> str:
    """The kernel, the counts and state, one bar per count, the notes, then the verdict, coverage and GPU state."""
    p, total = progress, progress["total"]
    parts = [
        f"<div style='{_BOX}'><b>{html.escape(p['kernel'])}</b> {html.escape(p['where'])}: "
        f"{p['done']}/{total} configs, <span data-tilelab='tuning-state'>{html.escape(p['state'])}</span></div>"
    ]
    for bar in p["bars"]:
        count = bar["count"]
        width = 100.0 * min(count, total) / max(total, 1)
        parts.append(
            f"<div style='{_BOX};display:flex;align-items:center;gap:8px'>"
            f"<span style='width:90px;{_MUTED}'>{html.escape(bar['label'])}</span>"
            f"<span style='flex:0 0 240px;height:8px;background:var(--jp-layout-color3,#d0d7de);border-radius:4px'>"
            f"<span style='display:block;height:8px;width:{width:.1f}%;background:{_BARS[bar['label']]};"
            "border-radius:4px'></span>"
            f"</span><span>{count}/{total}</span></div>"
        )
    parts += [f"<div style='{_BOX};{_MUTED}'>{html.escape(note)}</div>" for note in p["notes"]]
    lines = []
    if p["verdict"] is not None:
        lines.append(f"<span data-tilelab='tuning-verdict'>re-benchmark: {html.escape(p['verdict'])}</span>")
    lines += [html.escape(p[name]) for name in ("coverage", "gpu") if p[name] is not None]
    return "".join(parts) + "".join(f"<div style='{_BOX}'>{line}</div>" for line in lines)


def _number(value: Any) -> str:
    """A table value as text: floats to 4 significant digits, missing values empty."""
    if value is None:
        return ""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return f"{value:.4g}"
    return str(value)


def rows_html(rows: dict[str, Any]) -> str:
    """The rows as a table, the status coloured, numbers right-aligned."""
    if not rows["cells"]:
        return f"<div style='{_BOX};{_MUTED}'>no rows yet</div>"
    columns = rows["columns"]
    align = ["right" if numeric else "left" for numeric in rows["numeric"]]
    head = "".join(f"<th style='{_CELL};text-align:{side}'>{html.escape(c)}</th>" for c, side in zip(columns, align, strict=True))
    body = []
    for values in rows["cells"]:
        cells = []
        for name, side, value in zip(columns, align, values, strict=True):
            colour = _STATUS_COLOURS.get(str(value)) if name == "status" else None
            style = f"{_CELL};text-align:{side}" + (f";color:{colour}" if colour else "")
            cells.append(f"<td style='{style}'>{html.escape(_number(value))}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f"<div style='max-height:360px;overflow:auto'><table data-tilelab='tuning-rows' style='{_BOX};"
        f"border-collapse:collapse'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def pivot_html(pivot: dict[str, Any] | None) -> str:
    """Latency over two swept parameters as a heat map table (fastest bright, the minimum outlined); "" without one."""
    if pivot is None:
        return ""
    finite = [value for row in pivot["rows"] for value in row["values"] if value is not None]
    low, high = min(finite), max(finite)
    head = "".join(f"<th style='{_CELL};text-align:right'>{html.escape(c)}</th>" for c in pivot["columns"])
    rows = []
    for row in pivot["rows"]:
        cells = []
        for value in row["values"]:
            if value is None:
                cells.append(f"<td style='{_CELL};text-align:right;{_MUTED}'>—</td>")
                continue
            background, text = heat_colour((value - low) / (high - low) if high > low else 0.0)
            best = ";font-weight:bold;outline:2px solid #e3116c;outline-offset:-2px" if value == low else ""
            cells.append(
                f"<td data-best='{str(value == low).lower()}' style='{_CELL};text-align:right;"
                f"background:{background};color:{text}{best}'>{value:.4g}</td>"
            )
        rows.append(f"<tr><th style='{_CELL};text-align:right'>{html.escape(row['label'])}</th>{''.join(cells)}</tr>")
    corner = f"{html.escape(pivot['index_name'])} \\ {html.escape(pivot['columns_name'])}"
    caption = f"latency (ms) of {html.escape(pivot['kernel'])}: fastest bright, minimum outlined"
    return (
        f"<div style='{_BOX};{_MUTED};margin-top:6px'>{caption}</div>"
        f"<table data-tilelab='tuning-pivot' style='{_BOX};border-collapse:collapse;margin:2px 0 6px'>"
        f"<thead><tr><th style='{_CELL};text-align:left;{_MUTED}'>{corner}</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
