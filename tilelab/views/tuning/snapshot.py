"""The Tuning tab's snapshot: script-free HTML rendered from :func:`tilelab.views.tuning.data.tuning_data`'s dict alone.

``src/widgets/tuning.ts`` draws the same dict live.
The dict decides every label, number and colour (:mod:`~tilelab.views.tuning.colours`):
heat-map cells carry the background and text colour it chose, the bars and
statuses the CSS variables it chose. The page's own colours come from
JupyterLab's CSS variables with plain fallbacks, so light and dark themes both
read. The re-benchmark's verdict ("best by 2 % (± 0.3 %)", or a tie) is said
under the progress bars, and the rows mark the best (★) and the configs tied
with it (≈). Every string is escaped.
"""

from __future__ import annotations

import html
from typing import Any

from tilelab.views.html import ERROR_COLOUR, TRACK
from tilelab.views.tuning.snapshot_search import search_html
from tilelab.views.tuning.snapshot_timeline import timeline_html

__all__ = ["pivot_html", "progress_html", "rows_html", "search_html", "timeline_html", "tuning_html"]

_BOX = "font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;line-height:1.4"
_MUTED = "color:var(--jp-ui-font-color2,#6e7781)"
_CELL = "padding:2px 10px;border-bottom:1px solid var(--jp-border-color2,rgba(128,128,128,0.3));white-space:nowrap"


def tuning_html(data: dict[str, Any]) -> str:
    """The whole snapshot: progress, heat map, search charts, timeline and rows."""
    search = search_html(data["search"]) if data["search"] is not None else ""
    return (
        f"<div class='tilelab-tuning'>{progress_html(data['progress'])}{pivot_html(data['pivot'])}{search}"
        f"{timeline_html(data['timeline'])}{rows_html(data['rows'])}</div>"
    )


def progress_html(progress: dict[str, Any]) -> str:
    """The kernel, the counts and state, one bar per count, the notes, then the verdict, coverage and GPU state."""
    p = progress
    parts = [
        f"<div style='{_BOX}'><b>{html.escape(p['kernel'])}</b> {html.escape(p['where'])}: "
        f"{html.escape(p['counts'])}, <span data-tilelab='tuning-state'>{html.escape(p['state'])}</span></div>"
    ]
    for bar in p["bars"]:
        parts.append(
            f"<div style='{_BOX};display:flex;align-items:center;gap:8px'>"
            f"<span style='width:90px;{_MUTED}'>{html.escape(bar['label'])}</span>"
            f"<span style='flex:0 0 240px;height:8px;background:{TRACK};border-radius:4px'>"
            f"<span style='display:block;height:8px;width:{bar['width']}%;background:{html.escape(bar['colour'])};"
            "border-radius:4px'></span>"
            f"</span><span>{html.escape(bar['text'])}</span></div>"
        )
    parts += [f"<div style='{_BOX};{_MUTED}'>{html.escape(note)}</div>" for note in p["notes"]]
    lines = []
    if p["verdict"] is not None:
        lines.append(f"<span data-tilelab='tuning-verdict'>{html.escape(p['verdict'])}</span>")
    lines += [html.escape(p[name]) for name in ("coverage", "gpu") if p[name] is not None]
    return "".join(parts) + "".join(f"<div style='{_BOX}'>{line}</div>" for line in lines)


def rows_html(rows: dict[str, Any]) -> str:
    """The rows as a table, the status coloured, numbers right-aligned, the sorted column's header with its arrow,
    under the filter they were asked with (and why it could not be read) and a line saying when not every row is
    shown."""
    above = [f"filter: {rows['filter']}"] if rows["filter"] else []
    above += [rows["note"]] if rows["note"] else []
    lines = "".join(f"<div style='{_BOX};{_MUTED}'>{html.escape(line)}</div>" for line in above)
    if rows["filter_error"]:
        lines += f"<div style='{_BOX};color:{ERROR_COLOUR}'>{html.escape(rows['filter_error'])}</div>"
    if not rows["cells"]:
        return lines + f"<div style='{_BOX};{_MUTED}'>{'no row matches the filter' if rows['of'] else 'no rows yet'}</div>"
    align = ["right" if numeric else "left" for numeric in rows["numeric"]]
    head = "".join(
        f"<th style='{_CELL};text-align:{side}'>{html.escape(header)}</th>"
        for header, side in zip(rows["headers"], align, strict=True)
    )
    body = []
    for texts, colours in zip(rows["cells"], rows["colours"], strict=True):
        cells = []
        for side, text, colour in zip(align, texts, colours, strict=True):
            style = f"{_CELL};text-align:{side}" + (f";color:{html.escape(colour)}" if colour else "")
            cells.append(f"<td style='{style}'>{html.escape(text)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return lines + (
        f"<div style='max-height:360px;overflow:auto'><table data-tilelab='tuning-rows' style='{_BOX};"
        f"border-collapse:collapse'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def pivot_html(pivot: dict[str, Any] | None) -> str:
    """Latency over two swept parameters as a heat map table (fastest bright, the minimum outlined); "" without one."""
    if pivot is None:
        return ""
    mark = html.escape(pivot["mark"])
    head = "".join(f"<th style='{_CELL};text-align:right'>{html.escape(c)}</th>" for c in pivot["columns"])
    rows = []
    for row in pivot["rows"]:
        cells = []
        for cell in row["cells"]:
            if cell is None:
                cells.append(f"<td style='{_CELL};text-align:right;{_MUTED}'>—</td>")
                continue
            best = f";font-weight:bold;box-shadow:inset 0 0 0 2px {mark}" if cell["best"] else ""
            cells.append(
                f"<td data-best='{str(cell['best']).lower()}' style='{_CELL};text-align:right;"
                f"background:{html.escape(cell['background'])};color:{html.escape(cell['colour'])}{best}'>{html.escape(cell['text'])}</td>"
            )
        rows.append(f"<tr><th style='{_CELL};text-align:right'>{html.escape(row['label'])}</th>{''.join(cells)}</tr>")
    corner, caption = html.escape(pivot["corner"]), html.escape(pivot["caption"])
    return (
        f"<div style='{_BOX};{_MUTED};margin-top:6px'>{caption}</div>"
        f"<table data-tilelab='tuning-pivot' style='{_BOX};border-collapse:collapse;margin:2px 0 6px'>"
        f"<thead><tr><th style='{_CELL};text-align:left;{_MUTED}'>{corner}</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
