"""The Source tab's static snapshot: the two linked panes as script-free HTML, from :func:`source_data`'s dict alone.

Linked lines are tinted alike in both panes (one colour per cell line), and the links
are listed as a table; the snapshot knows nothing of records.
"""

from __future__ import annotations

import colorsys
from typing import Any

from tilelab.views.html import MONO, details, escape, table

__all__ = ["source_snapshot"]


def _tint(k: int) -> str:
    """The ``k``-th cell's tint: golden-angle hues, in rgba (JupyterLab's sanitiser drops hsla)."""
    red, green, blue = (round(255 * c) for c in colorsys.hls_to_rgb((k * 137.508) % 360 / 360, 0.55, 0.70))
    return f"rgba({red},{green},{blue},.22)"


_TINTS = [_tint(k) for k in range(12)]
_PRE = f"{MONO};white-space:pre;overflow:auto;max-height:520px;margin:0"
_PANE = "flex:1 1 0;min-width:0;border:1px solid rgba(128,128,128,.3)"


def _note(text: str) -> str:
    return f"<p data-tilelab='binary-note' style='color:var(--jp-ui-font-color2,#6e7781)'>{escape(text)}</p>"


def _ranges(numbers: list[int]) -> str:
    """``[3, 4, 5, 9]`` as ``"3–5, 9"``."""
    numbers = sorted(set(numbers))
    spans, start, previous = [], numbers[0], numbers[0]
    for number in [*numbers[1:], None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        spans.append(str(start) if start == previous else f"{start}–{previous}")
        if number is not None:
            start = previous = number
    return ", ".join(spans)


def _numbered(text: str, tint: dict[int, str]) -> str:
    """``text`` with line numbers, lines in ``tint`` on their group's colour."""
    lines = text.splitlines()
    width = len(str(len(lines)))
    out = []
    for number, line in enumerate(lines, start=1):
        row = f"{number:>{width}}  {escape(line)}\n"
        out.append(f"<span style='display:block;background:{tint[number]}'>{row}</span>" if number in tint else row)
    return "".join(out)


def _pane(pane: dict[str, Any], side: str, tint: dict[int, str]) -> str:
    return (
        f"<div style='{_PANE}'><div style='font-weight:600;padding:2px 4px'>{escape(pane['title'])}</div>"
        f"<pre data-tilelab='{side}' style='{_PRE}'>{_numbered(pane['text'], tint)}</pre></div>"
    )


def source_snapshot(data: dict[str, Any]) -> str:
    """The cell and the device code side by side, linked lines tinted alike, and the links as a table."""
    if len(data["panes"]) < 2:
        return "<p>No generated source.</p>" + _note(data["binary_note"])
    python, device = data["panes"]
    by_cell: dict[int, list[int]] = {}
    for cuda, cell, _how in sorted(data["links"]):
        by_cell.setdefault(cell, []).append(cuda)
    colour = {cell: _TINTS[k % len(_TINTS)] for k, cell in enumerate(sorted(by_cell))}
    cuda_tint = {cuda: colour[cell] for cuda, cell, _how in data["links"]}
    panes = f"<div style='display:flex;gap:8px'>{_pane(python, 'python', colour)}{_pane(device, 'device', cuda_tint)}</div>"
    python_lines = python["text"].splitlines()
    rows = [
        (
            str(line),
            f"<code>{escape(python_lines[line - 1].strip() if 0 < line <= len(python_lines) else '')}</code>",
            escape(_ranges(cudas)),
        )
        for line, cudas in sorted(by_cell.items())
    ]
    table_html = table(rows, ("cell line", "code", f"{data['words'][1]}s"), attrs=" data-tilelab='line-links'")
    listed = details(f"line links ({len(rows)} cell lines)", table_html)
    host = "<p style='color:var(--jp-ui-font-color2,#6e7781)'>Host code: in the live view.</p>" if data["has_host"] else ""
    return panes + listed + host + _note(data["note"])
