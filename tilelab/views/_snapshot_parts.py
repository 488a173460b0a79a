"""Source and layout sections of the static snapshot (see :mod:`tilelab.views.html`)."""

from __future__ import annotations

import numpy as np

from tilelab.records import KernelRecord, LayoutKind, LayoutRecord
from tilelab.views.html import MONO, color_of, details, escape, table
from tilelab.views.layout import fragment_grid, leading_count, shared_grid
from tilelab.views.layout_view import layout_summary
from tilelab.views.source import binary_note, kernel_links

CORNER = 16  # rows and columns of the labelled corner table
SVG_CELLS = 128  # rows and columns drawn in a layout's SVG map


def highlight(text: str, language: str) -> str:
    """``text`` highlighted by pygments with inline styles and line numbers (pygments escapes it)."""
    from pygments import highlight as _highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import CLexer, CudaLexer, PythonLexer

    lexer = {"python": PythonLexer, "cuda": CudaLexer}.get(language, CLexer)()
    formatter = HtmlFormatter(noclasses=True, nowrap=True, linenos="inline", style="default")
    return f"<pre style='{MONO};white-space:pre;overflow:auto;max-height:520px;margin:0'>{_highlight(text, lexer, formatter)}</pre>"


def source_html(record: KernelRecord) -> str:
    """Python and device code side by side, the line links as a table, host code and the binary note."""
    source = record.source
    note = f"<p data-tilelab='binary-note' style='color:#666'>{escape(binary_note(record))}</p>"
    if source is None:
        return "<p>No generated source.</p>" + note
    pane = "flex:1 1 50%;min-width:0;border:1px solid #ddd"
    panes = (
        "<div style='display:flex;gap:8px'>"
        f"<div style='{pane}'><div style='font-weight:600'>Python — {escape(source.kernel_file)}</div>{highlight(source.kernel_source, 'python')}</div>"
        f"<div style='{pane}'><div style='font-weight:600'>Device ({escape(source.language)})</div>{highlight(source.device, source.language)}</div>"
        "</div>"
    )
    by_line: dict[int, list[int]] = {}
    for device_line, line in kernel_links(source):
        by_line.setdefault(line, []).append(device_line)
    python_lines = source.kernel_source.splitlines()
    rows = [
        (
            str(line),
            f"<code>{escape(python_lines[line - 1].strip() if 0 < line <= len(python_lines) else '')}</code>",
            escape(_ranges(lines)),
        )
        for line, lines in sorted(by_line.items())
    ]
    links = details(
        f"line links ({len(rows)} Python lines)",
        table(rows, ("Python line", "code", "device lines"), attrs=" data-tilelab='line-links'"),
    )
    # Host code is long boilerplate (~27 kB for a GEMM): plain text keeps the snapshot fast to build.
    host_text = f"<pre style='{MONO};white-space:pre;overflow:auto;max-height:520px'>{escape(source.host or '')}</pre>"
    host = details("host code", host_text) if source.host else ""
    return panes + links + host + note


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


def _svg_map(values: np.ndarray, title: str) -> str:
    """Cells coloured by ``values`` (categorical), runs of equal neighbours merged into one rect."""
    values = values[:SVG_CELLS, :SVG_CELLS]
    rows, cols = values.shape
    cell = max(2, min(12, 512 // max(rows, cols)))
    rects = []
    for r in range(rows):
        c = 0
        while c < cols:
            end = c + 1
            while end < cols and values[r, end] == values[r, c]:
                end += 1
            rects.append(
                f"<rect x='{c * cell}' y='{r * cell}' width='{(end - c) * cell}' height='{cell}' fill='{color_of(values[r, c])}'/>"
            )
            c = end
    size = f"width='{cols * cell}' height='{rows * cell}'"
    return f"<svg xmlns='http://www.w3.org/2000/svg' {size} viewBox='0 0 {cols * cell} {rows * cell}'><title>{escape(title)}</title>{''.join(rects)}</svg>"


def _corner_table(labels: np.ndarray, colors: np.ndarray, kind: str) -> str:
    rows, cols = labels.shape
    body = "".join(
        "<tr>"
        + "".join(f"<td style='background:{color_of(colors[r, c])}'>{escape(labels[r, c])}</td>" for c in range(cols))
        + "</tr>"
        for r in range(rows)
    )
    return f"<table data-tilelab='{kind}' cellpadding='1' style='border-collapse:collapse;text-align:center;{MONO};font-size:10px'>{body}</table>"


def _layout_body(layout: LayoutRecord) -> str:
    clip = (
        ""
        if leading_count(layout) == 1
        else f"<p style='color:#666'>tile 0 of {leading_count(layout)} (leading dimensions flattened)</p>"
    )
    if layout.kind is LayoutKind.FRAGMENT and layout.thread is not None:
        grid = fragment_grid(layout)
        corner = (slice(0, CORNER), slice(0, CORNER))
        labels = np.char.add(np.char.add("T", grid["thread"].astype(str)), np.char.add("/L", grid["local"].astype(str)))
        return (
            clip
            + "<div>owning warp of each element (colour = warp)</div>"
            + _svg_map(grid["warp"], f"{layout.buffer}: warp map")
            + f"<div>thread / local index, top-left {min(CORNER, labels.shape[0])} × {min(CORNER, labels.shape[1])} (colour = thread)</div>"
            + _corner_table(labels[corner], grid["thread"][corner], "fragment-table")
        )
    if layout.offset is not None:
        grid = shared_grid(layout)
        corner = (slice(0, CORNER // 2), slice(0, 2 * CORNER))
        return (
            clip
            + f"<div>32-bank id of each element, top-left {min(CORNER // 2, grid['bank'].shape[0])} rows (colour = bank)</div>"
            + _corner_table(grid["bank"][corner].astype(str), grid["bank"][corner], "bank-table")
            + "<div>physical offset, same corner</div>"
            + _corner_table(grid["offset"][corner].astype(str), grid["bank"][corner], "offset-table")
        )
    return "<p>No element table for this layout.</p>"


def layouts_html(record: KernelRecord) -> str:
    """One ``<details>`` per layout: a warp map and labelled corner (fragments) or bank and offset maps (shared)."""
    if not record.layouts:
        return "<p>No layouts in this record.</p>"
    return "".join(
        details(
            f"{name}: {layout.kind.value} {'×'.join(map(str, layout.shape))} {layout.dtype}",
            f"<p>{escape(layout_summary(layout))}</p>" + _layout_body(layout),
        )
        for name, layout in record.layouts.items()
    )
