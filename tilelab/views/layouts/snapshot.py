"""The Layouts section of the static snapshot: script-free HTML drawn from :func:`~tilelab.views.layouts.data.layouts_data`'s dict alone.

Fragments: a warp legend, the ``T<thread>/L<local>`` grid of the tile's first
elements (absolute thread ids, cells in their warp's colour, wide tiles wrapped
into bands) and the whole tile's warp map as SVG, a tooltip on each warp's block.
Shared layouts: bank and offset tables of the top-left corner, cells in their
bank's colour. Cells keep the palette's light colours with dark text, so they
read on light and dark pages.
"""

from __future__ import annotations

import colorsys
import itertools
from typing import Any

import numpy as np

from tilelab.views.html import MONO, Tip, chart, details, escape

__all__ = ["bands", "layouts_snapshot"]

WARP_SIZE = 32
LABELLED_CELLS = 256  # cells of the labelled grid (16 x 16 for a square tile)
BAND_COLUMNS = 16  # columns of one band of the labelled grid
MAP_WIDTH = 512  # pixels of the warp map's widest band
MAP_ROWS = 256  # rows of the warp map (the rest is summarised in a line)
MAP_RECTS = 2048  # rects of the warp map at most (runs of one warp are one rect)
MAP_TIPS = 256  # a warp map of at most this many rects has a tooltip on each (a finer one would weigh ~150 bytes a rect)
_NOTE = "color:var(--jp-ui-font-color2,#888);margin:2px 0"
_HEAD = "color:var(--jp-ui-font-color2,#888);font-weight:400"


def bands(cols: int, width: int, align: int) -> list[tuple[int, int]]:
    """Column ranges ``[start, end)`` of a tile ``cols`` wide wrapped into bands of at most ``width`` columns.

    A band is a multiple of ``align`` columns wide (a power of two when narrower): the data's wrapping rule.
    """
    if cols <= width:
        return [(0, cols)]
    step = width // align * align if width >= align else 1 << max(0, int(width).bit_length() - 1)
    return [(start, min(cols, start + step)) for start in range(0, cols, step)]


class _Colours:
    """The palette's light cell colours as ``#rrggbb`` (a snapshot has no theme)."""

    def __init__(self, palette: dict[str, Any]) -> None:
        self.hues, self.shades, self.golden = palette["hues"], palette["shades"], palette["golden_angle"]
        self.light, self.bank_colour = palette["light"], palette["bank"]
        self.text = self.light["text"]

    def warp(self, warp: int, lane: int) -> str:
        light = self.light
        lightness = light["lightness"] + light["shade_step"] * (int(lane) % self.shades)
        return _hex(self.hues[int(warp) % len(self.hues)], light["saturation"], lightness)

    def bank(self, bank: int) -> str:
        return _hex((int(bank) * self.golden) % 360, self.bank_colour["saturation"], self.bank_colour["lightness"])


def _hex(hue: float, saturation: float, lightness: float) -> str:
    red, green, blue = colorsys.hls_to_rgb(hue / 360, lightness / 100, saturation / 100)
    return f"#{round(red * 255):02x}{round(green * 255):02x}{round(blue * 255):02x}"


def _window(rows: int, cols: int) -> tuple[int, int]:
    """Rows and columns of the labelled window: about :data:`LABELLED_CELLS` cells from the top-left corner."""
    shown_rows = min(rows, BAND_COLUMNS)
    return shown_rows, min(cols, max(BAND_COLUMNS, LABELLED_CELLS // shown_rows))


def _grid_tables(labels: np.ndarray, colours: np.ndarray, kind: str, text: str, width: int, align: int) -> str:
    """One table per band of at most ``width`` columns, row and column numbers in the margins."""
    # Cells are many: padding, spacing and text colour are set once on the table; a cell has only its colour
    # (``bgcolor``: shortest, and kept by renderers that strip styles).
    style = (
        f"border-spacing:1px;text-align:center;{MONO};font-size:10px;color:{text};white-space:nowrap;margin:2px 0 6px"
    )
    rows, cols = labels.shape
    tables = []
    for start, end in bands(cols, width, align):
        head = "".join(f"<th>{c}</th>" for c in range(start, end))
        body = "".join(
            f"<tr><th style='{_HEAD}'>{r}</th>"
            + "".join(f"<td bgcolor='{colours[r, c]}'>{escape(labels[r, c])}</td>" for c in range(start, end))
            + "</tr>"
            for r in range(rows)
        )
        tables.append(
            f"<table data-tilelab='{kind}' cellpadding='1' style='{style}'>"
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


def _warp_map(
    warps: np.ndarray, threads: tuple[int, int], title: str, colours: _Colours, align: int
) -> tuple[str, list[Tip], int, int]:
    """Every element's warp as SVG rects (equal neighbours merged), wide tiles wrapped into bands; each rect's
    tooltip (its warp and that warp's ``threads``, rows, columns; none on a map of more than :data:`MAP_TIPS`
    rects), the rows drawn and the columns of a band.

    Rows are drawn while the rects stay under :data:`MAP_RECTS` (a tile whose warps alternate every element
    would otherwise cost a rect per element).
    """
    rows, cols = min(len(warps), MAP_ROWS), warps.shape[1]
    cell = int(np.clip(256 // max(rows, min(cols, 256)), 2, 8))
    tall = max(cell, min(8, 32 // rows))  # a few long rows get taller cells, so each row stays visible
    spans = bands(cols, MAP_WIDTH // cell, align)
    rects = _rects(warps[:rows], spans)
    drawn = rows
    if len(rects) > MAP_RECTS:
        drawn = max(1, rects[MAP_RECTS][4])
        rects = [[*rect[:5], min(rect[5], drawn)] for rect in rects if rect[4] < drawn]
    gap = 6 if len(spans) > 1 else 0
    band_height = drawn * tall + gap
    boxes = [
        ((s - spans[n][0]) * cell, n * band_height + top * tall, (e - s) * cell, (bottom - top) * tall, w)
        for n, s, e, w, top, bottom in rects
    ]
    shapes = "".join(
        f"<rect x='{x}' y='{y}' width='{wide}' height='{high}' fill='{colours.warp(w, 0)}'/>" for x, y, wide, high, w in boxes
    )
    tips: list[Tip] = []
    if len(rects) <= MAP_TIPS:
        tips = [
            (*box[:4], f"{_warp_threads(w, *threads)}: rows {top}–{bottom - 1}, columns {s}–{e - 1}")
            for box, (_, s, e, w, top, bottom) in zip(boxes, rects, strict=True)
        ]
    width, height = (spans[0][1] - spans[0][0]) * cell, len(spans) * band_height - gap
    svg = (
        f"<svg xmlns='http://www.w3.org/2000/svg' data-tilelab='warp-map' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}'><title>{escape(title)}</title>{shapes}</svg>"
    )
    return svg, tips, drawn, spans[0][1] - spans[0][0]


def _warp_threads(warp: int, start: int, end: int) -> str:
    """``warp`` and its threads of ``[start, end)``."""
    return f"warp {warp} · T{max(start, warp * WARP_SIZE)}–T{min(end, (warp + 1) * WARP_SIZE) - 1}"


def _legend(entry: dict[str, Any], colours: _Colours) -> str:
    start, end = entry["threads"]
    chips = [
        f"<span style='background:{colours.warp(warp, 0)};color:{colours.text};padding:1px 4px;"
        f"display:inline-block;margin:0 4px 2px 0'>{_warp_threads(warp, start, end)}</span>"
        for warp in range(start // WARP_SIZE, (max(start, end - 1)) // WARP_SIZE + 1)
    ]
    return f"<div data-tilelab='warp-legend' style='{MONO};font-size:11px'>{''.join(chips)}</div>"


def _table(tile: dict[str, Any], name: str) -> np.ndarray:
    return np.asarray(tile[name], dtype=np.int64).reshape(tile["rows"], tile["cols"])


def _fragment_body(entry: dict[str, Any], colours: _Colours, align: int) -> str:
    tile = entry["tile"]
    thread, local = _table(tile, "thread"), _table(tile, "local")
    rows, cols = thread.shape
    shown_rows, shown_cols = _window(rows, cols)
    window = (slice(0, shown_rows), slice(0, shown_cols))
    cells = np.vectorize(colours.warp)(thread[window] // WARP_SIZE, thread[window] % WARP_SIZE)
    labels = np.char.add(np.char.add("T", thread[window].astype(str)), np.char.add("/L", local[window].astype(str)))
    replica = f", replica 0 of {entry['replicas']}" if entry["replicas"] > 1 else ""
    title = f"{entry['buffer']}: warp map"
    warp_map, tips, drawn, band = _warp_map(thread // WARP_SIZE, entry["threads"], title, colours, align)
    clipped = f", the first {drawn} of {rows} rows" if drawn < rows else ""
    clipped += f", wrapped: {band} columns a band" if band < cols else ""
    return (
        _legend(entry, colours)
        + f"<p style='{_NOTE}'>T&lt;threadIdx.x&gt;/L&lt;local register&gt; of rows 0–{shown_rows - 1}, "
        f"columns 0–{shown_cols - 1}{escape(replica)} (colour = warp, shade = lane % 4)</p>"
        + _grid_tables(labels, cells, "fragment-table", colours.text, BAND_COLUMNS, align)
        + f"<p style='{_NOTE}'>owning warp of every element{clipped}</p>"
        + chart(warp_map, title, invert_when_dark=False, tips=tips)
    )


def _shared_body(entry: dict[str, Any], colours: _Colours, align: int) -> str:
    tile = entry["tile"]
    offset, bank = _table(tile, "offset"), _table(tile, "bank")
    rows, cols = offset.shape
    window = (slice(0, min(rows, 8)), slice(0, min(cols, 2 * BAND_COLUMNS)))
    cells = np.vectorize(colours.bank)(bank[window])
    where = f"rows 0–{window[0].stop - 1}, columns 0–{window[1].stop - 1}"
    offsets = offset[window]
    width = len(str(int(offsets.max())))
    text = "\n".join(" ".join(f"{value:>{width}}" for value in row) for row in offsets.tolist())
    return (
        f"<p style='{_NOTE}'>32-bank id of each element, {where} (colour = bank)</p>"
        + _grid_tables(bank[window].astype(str), cells, "bank-table", colours.text, 2 * BAND_COLUMNS, align)
        + f"<p style='{_NOTE}'>physical element offset, same corner</p>"
        + f"<pre data-tilelab='offset-table' style='{MONO};font-size:10px;margin:2px 0 6px'>{text}</pre>"
    )


def _layout(entry: dict[str, Any], colours: _Colours, align: int) -> str:
    """One layout's picture: the labelled grid and warp map (fragments) or bank and offset tables (shared)."""
    parts = [
        f"<p style='margin:2px 0'>{escape(entry['summary'])}</p>",
        f"<p data-tilelab='layout-description' style='{_NOTE};{MONO};font-size:11px;overflow-wrap:break-word'>"
        f"{escape(entry['description'])}</p>",
    ]
    if entry["tiles"] > 1:
        parts.append(f"<p style='{_NOTE}'>tile 0 of {entry['tiles']} (leading dimensions flattened)</p>")
    if entry["tile"] is None:
        parts.append("<p>No element table for this layout (too large to tabulate).</p>")
    elif entry["kind"] == "fragment":
        parts.append(_fragment_body(entry, colours, align))
    else:
        parts.append(_shared_body(entry, colours, align))
    return "".join(parts)


def layouts_snapshot(data: dict[str, Any]) -> str:
    """One ``<details>`` per layout of the tab's ``data`` (:func:`~tilelab.views.layouts.data.layouts_data`)."""
    if not data["layouts"]:
        return "<p>No layouts in this record.</p>"
    colours, align = _Colours(data["palette"]), data["wrap"]["align"]
    return "".join(
        details(f"{e['name']}: {e['kind']} {'×'.join(map(str, e['shape']))} {e['dtype']}", _layout(e, colours, align))
        for e in data["layouts"]
    )
