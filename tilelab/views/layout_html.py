"""The Layouts section of the static snapshot: the live grid's picture as script-free HTML.

Fragments: a warp legend, the ``T<thread>/L<local>`` grid of the tile's first
elements (absolute thread ids, cells in their warp's colour, wide tiles wrapped
into bands) and the whole tile's warp map as SVG. Shared layouts: bank and
offset tables of the top-left corner, cells in their bank's colour. Cells keep
their own light colours with dark text, so they read on light and dark pages.
"""

from __future__ import annotations

import itertools

import numpy as np

from tilelab.records import KernelRecord, LayoutKind, LayoutRecord
from tilelab.views.html import MONO, details, escape
from tilelab.views.layout import (
    WARP_SIZE,
    bands,
    bank_colour,
    cell_labels,
    fragment_grid,
    layout_summary,
    leading_count,
    shared_grid,
    thread_range,
    warp_colour,
)

__all__ = ["layout_html", "layouts_html"]

LABELLED_CELLS = 256  # cells of the labelled grid (16 x 16 for a square tile)
BAND_COLUMNS = 16  # columns of one band of the labelled grid
MAP_WIDTH = 512  # pixels of the warp map's widest band
MAP_ROWS = 256  # rows of the warp map (the rest is summarised in a line)
MAP_RECTS = 2048  # rects of the warp map at most (runs of one warp are one rect)
_NOTE = "color:var(--jp-ui-font-color2,#888);margin:2px 0"
# Cells are many: padding, spacing and dark text are set once on the table; a cell has only its colour
# (``bgcolor``: shortest, and kept by renderers that strip styles).
_TABLE = f"border-spacing:1px;text-align:center;{MONO};font-size:10px;color:#111;white-space:nowrap;margin:2px 0 6px"
_HEAD = "color:var(--jp-ui-font-color2,#888);font-weight:400"


def _window(rows: int, cols: int) -> tuple[int, int]:
    """Rows and columns of the labelled window: about :data:`LABELLED_CELLS` cells from the top-left corner."""
    shown_rows = min(rows, BAND_COLUMNS)
    return shown_rows, min(cols, max(BAND_COLUMNS, LABELLED_CELLS // shown_rows))


def _grid_tables(labels: np.ndarray, colours: np.ndarray, kind: str, width: int = BAND_COLUMNS) -> str:
    """One table per band of at most ``width`` columns, row and column numbers in the margins."""
    rows, cols = labels.shape
    tables = []
    for start, end in bands(cols, width):
        head = "".join(f"<th>{c}</th>" for c in range(start, end))
        body = "".join(
            f"<tr><th style='{_HEAD}'>{r}</th>"
            + "".join(
                f"<td bgcolor='{colours[r, c]}'>{escape(labels[r, c])}</td>" for c in range(start, end)
            )
            + "</tr>"
            for r in range(rows)
        )
        tables.append(
            f"<table data-tilelab='{kind}' cellpadding='1' style='{_TABLE}'>"
            f"<thead style='{_HEAD}'><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table>"
        )
    return "".join(tables)


def _rects(warps: np.ndarray, spans: list[tuple[int, int]]) -> list[list[int]]:
    """``[band, start, end, warp, first_row, end_row]`` rects: runs of one warp along a row (cut at band edges),
    stacked down while the next row has the same run. Rows in order, so a prefix of rows is a prefix of rects."""
    rects: list[list[int]] = []
    open_: dict[tuple[int, int, int, int], list[int]] = {}
    for r, row in enumerate(warps):
        edges = sorted({0, len(row), *(np.flatnonzero(np.diff(row)) + 1).tolist(), *(a for a, _ in spans)})
        current: dict[tuple[int, int, int, int], list[int]] = {}
        for start, end in itertools.pairwise(edges):
            band = next(n for n, (a, b) in enumerate(spans) if a <= start < b)
            key = (band, start, end, int(row[start]))
            rect = open_.get(key)
            if rect is not None and rect[5] == r:
                rect[5] = r + 1
            else:
                rect = [*key, r, r + 1]
                rects.append(rect)
            current[key] = rect
        open_ = current
    return rects


def _warp_map(warps: np.ndarray, title: str) -> tuple[str, int, int]:
    """Every element's warp as SVG rects (equal neighbours merged), wide tiles wrapped into bands; the rows drawn
    and the columns of a band.

    Rows are drawn while the rects stay under :data:`MAP_RECTS` (a tile whose warps alternate every element
    would otherwise cost a rect per element).
    """
    rows, cols = min(len(warps), MAP_ROWS), warps.shape[1]
    cell = int(np.clip(256 // max(rows, min(cols, 256)), 2, 8))
    tall = max(cell, min(8, 32 // rows))  # a few long rows get taller cells, so each row stays visible
    spans = bands(cols, MAP_WIDTH // cell)
    rects = _rects(warps[:rows], spans)
    drawn = rows
    if len(rects) > MAP_RECTS:
        drawn = max(1, rects[MAP_RECTS][4])
        rects = [[*rect[:5], min(rect[5], drawn)] for rect in rects if rect[4] < drawn]
    gap = 6 if len(spans) > 1 else 0
    band_height = drawn * tall + gap
    shapes = "".join(
        f"<rect x='{(s - spans[n][0]) * cell}' y='{n * band_height + top * tall}' width='{(e - s) * cell}' "
        f"height='{(bottom - top) * tall}' fill='{warp_colour(w, 0)}'/>"
        for n, s, e, w, top, bottom in rects
    )
    width, height = (spans[0][1] - spans[0][0]) * cell, len(spans) * band_height - gap
    svg = (
        f"<svg xmlns='http://www.w3.org/2000/svg' data-tilelab='warp-map' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}'><title>{escape(title)}</title>{shapes}</svg>"
    )
    return svg, drawn, spans[0][1] - spans[0][0]


def _legend(layout: LayoutRecord) -> str:
    start, end = thread_range(layout)
    chips = []
    for warp in range(start // WARP_SIZE, (max(start, end - 1)) // WARP_SIZE + 1):
        first, last = max(start, warp * WARP_SIZE), min(end, (warp + 1) * WARP_SIZE) - 1
        chips.append(
            f"<span style='background:{warp_colour(warp, 0)};color:#111;padding:1px 4px;display:inline-block;"
            "margin:0 4px 2px 0'>"
            f"warp {warp} · T{first}–T{last}</span>"
        )
    return f"<div data-tilelab='warp-legend' style='{MONO};font-size:11px'>{''.join(chips)}</div>"


def _fragment_body(layout: LayoutRecord) -> str:
    grid = fragment_grid(layout)
    rows, cols = grid["thread"].shape
    shown_rows, shown_cols = _window(rows, cols)
    window = (slice(0, shown_rows), slice(0, shown_cols))
    colours = np.vectorize(warp_colour)(grid["warp"][window], grid["lane"][window])
    labels = cell_labels(layout, {name: table[window] for name, table in grid.items()})
    replica = f", replica 0 of {layout.replicas}" if layout.replicas > 1 else ""
    warp_map, drawn, band = _warp_map(grid["warp"], f"{layout.buffer}: warp map")
    clipped = f", the first {drawn} of {rows} rows" if drawn < rows else ""
    clipped += f", wrapped: {band} columns a band" if band < cols else ""
    return (
        _legend(layout)
        + f"<p style='{_NOTE}'>T&lt;threadIdx.x&gt;/L&lt;local register&gt; of rows 0–{shown_rows - 1}, "
        f"columns 0–{shown_cols - 1}{escape(replica)} (colour = warp, shade = lane % 4)</p>"
        + _grid_tables(labels, colours, "fragment-table")
        + f"<p style='{_NOTE}'>owning warp of every element{clipped}</p>"
        + warp_map
    )


def _shared_body(layout: LayoutRecord) -> str:
    grid = shared_grid(layout)
    rows, cols = grid["offset"].shape
    window = (slice(0, min(rows, 8)), slice(0, min(cols, 2 * BAND_COLUMNS)))
    colours = np.vectorize(bank_colour)(grid["bank"][window])
    where = f"rows 0–{window[0].stop - 1}, columns 0–{window[1].stop - 1}"
    offsets = grid["offset"][window]
    width = len(str(int(offsets.max())))
    text = "\n".join(" ".join(f"{value:>{width}}" for value in row) for row in offsets.tolist())
    return (
        f"<p style='{_NOTE}'>32-bank id of each element, {where} (colour = bank)</p>"
        + _grid_tables(grid["bank"][window].astype(str), colours, "bank-table", 2 * BAND_COLUMNS)
        + f"<p style='{_NOTE}'>physical element offset, same corner</p>"
        + f"<pre data-tilelab='offset-table' style='{MONO};font-size:10px;margin:2px 0 6px'>{text}</pre>"
    )


def layout_html(layout: LayoutRecord) -> str:
    """One layout's picture: the labelled grid and warp map (fragments) or bank and offset tables (shared)."""
    tiles = leading_count(layout)
    parts = [
        f"<p style='margin:2px 0'>{escape(layout_summary(layout))}</p>",
        f"<p data-tilelab='layout-description' style='{_NOTE};{MONO};font-size:11px;overflow-wrap:anywhere'>"
        f"{escape(layout.description)}</p>",
    ]
    if tiles > 1:
        parts.append(f"<p style='{_NOTE}'>tile 0 of {tiles} (leading dimensions flattened)</p>")
    if layout.kind is LayoutKind.FRAGMENT and layout.thread is not None and layout.local_index is not None:
        parts.append(_fragment_body(layout))
    elif layout.offset is not None:
        parts.append(_shared_body(layout))
    else:
        parts.append("<p>No element table for this layout (too large to tabulate).</p>")
    return "".join(parts)


def layouts_html(record: KernelRecord) -> str:
    """One ``<details>`` per layout of ``record``."""
    if not record.layouts:
        return "<p>No layouts in this record.</p>"
    return "".join(
        details(f"{name}: {layout.kind.value} {'×'.join(map(str, layout.shape))} {layout.dtype}", layout_html(layout))
        for name, layout in record.layouts.items()
    )
