"""Layout data shaping: the tables, labels, colours and wrapping that every layout picture draws from.

One shaping serves three renderings: the live grid (``src/widgets/layouts.ts``,
fed by :func:`grid_payload` and :func:`layout_entries` through
:class:`~tilelab.views.layout_view.LayoutsWidget`), the script-free snapshot
(:mod:`tilelab.views.layout_html`) and the plotly / matplotlib figures of
``LayoutRecord.plot()`` (:mod:`tilelab.views.layout_plots`).

Thread ids are absolute (``threadIdx.x``): TileLang tabulates a fragment's
threads from 0, but on sm_90 a consumer warpgroup's fragment lives on the
threads of its ``thread_range`` (e.g. ``[128, 256)``), which the fragment's
description states.
"""

from __future__ import annotations

import colorsys
import re
from typing import Any

import numpy as np

from tilelab.records import LayoutKind, LayoutRecord
from tilelab.views.banks import ACCESSES, bank_conflicts, bank_map

__all__ = [
    "COLORS",
    "PALETTE",
    "bands",
    "fragment_grid",
    "grid_payload",
    "label_cells",
    "layout_entries",
    "layout_summary",
    "leading_count",
    "shared_grid",
    "thread_range",
    "warp_colour",
]

COLORS = ("thread", "warp", "local")
LABEL_LIMIT = 1024  # cells; above this T#/L# labels are unreadable in a figure
WARP_SIZE = 32
# Categorical warp hues (ordered so that neighbouring warps differ most) and how many lane shades each warp gets:
# the live grid and the snapshot both draw from this one palette.
PALETTE = {"hues": (212, 28, 134, 352, 268, 48, 188, 318, 90, 240, 8, 160), "shades": 4}
_RANGE = re.compile(r"thread_range:\s*(?:\w+\.)?Range\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)")


def thread_range(layout: LayoutRecord) -> tuple[int, int]:
    """``[start, end)`` of the ``threadIdx.x`` values a fragment's threads are (from its description; else from 0)."""
    if layout.thread_start:
        return layout.thread_start, layout.thread_start + layout.threads
    match = _RANGE.search(layout.description or "")  # records saved before thread_start was captured
    if match is not None:
        return int(match.group(1)), int(match.group(2))
    return 0, layout.threads


def _hex(hue: float, saturation: float, lightness: float) -> str:
    red, green, blue = colorsys.hls_to_rgb(hue / 360, lightness, saturation)
    return f"#{round(red * 255):02x}{round(green * 255):02x}{round(blue * 255):02x}"


def warp_colour(warp: int, lane: int) -> str:
    """The snapshot's cell colour of ``warp``: its categorical hue, a shade per lane group (dark text reads on it).

    The live grid computes the same colours from :data:`PALETTE` (``hsl(hue, 62%, 82% - 5% * shade)``).
    """
    hues, shades = PALETTE["hues"], PALETTE["shades"]
    return _hex(hues[int(warp) % len(hues)], 0.62, 0.82 - 0.05 * (int(lane) % shades))


def bank_colour(bank: int) -> str:
    """The snapshot's colour of a shared-memory bank (golden-angle hues: neighbouring banks differ)."""
    return _hex((int(bank) * 137.508) % 360, 0.60, 0.78)


def _tiles(array: np.ndarray) -> np.ndarray:
    """``array`` as a stack of 2-D tiles: leading dims flattened, a 1-D array is one row."""
    array = np.asarray(array)
    if array.ndim <= 1:
        return array.reshape(1, 1, -1)
    return array.reshape(-1, *array.shape[-2:])


def leading_count(layout: LayoutRecord) -> int:
    """How many 2-D tiles the layout has (the product of the dims before the last two)."""
    return int(np.prod(layout.shape[:-2], dtype=np.int64)) if len(layout.shape) > 2 else 1


def label_cells(rows: int, cols: int) -> bool:
    """Whether ``T#/L#`` labels are readable on a ``rows`` x ``cols`` tile drawn at once (figures)."""
    return rows * cols <= LABEL_LIMIT and cols <= 32


def fragment_grid(layout: LayoutRecord, replica: int = 0, index: int = 0) -> dict[str, np.ndarray]:
    """2-D ``thread`` (absolute ``threadIdx.x``), ``warp``, ``lane`` and ``local`` tables of tile ``index``."""
    if layout.thread is None or layout.local_index is None:
        raise ValueError(f"layout of {layout.buffer!r} has no thread tables (kind {layout.kind.value})")
    if not 0 <= replica < layout.thread.shape[0]:
        raise ValueError(f"replica {replica} out of range: {layout.buffer!r} has {layout.thread.shape[0]}")
    thread = _tiles(layout.thread[replica])[index].astype(np.int64) + thread_range(layout)[0]
    return {
        "thread": thread,
        "warp": thread // WARP_SIZE,
        "lane": thread % WARP_SIZE,
        "local": _tiles(layout.local_index[replica])[index],
    }


def shared_grid(layout: LayoutRecord, index: int = 0) -> dict[str, np.ndarray]:
    """2-D ``offset`` and ``bank`` tables of tile ``index`` (leading dims flattened)."""
    return {"offset": _tiles(layout.offset)[index], "bank": _tiles(bank_map(layout))[index]}


def has_table(layout: LayoutRecord) -> bool:
    """Whether the record kept the layout's element tables (very large buffers keep only the description)."""
    if layout.kind is LayoutKind.FRAGMENT:
        return layout.thread is not None and layout.local_index is not None
    return layout.offset is not None


def tile_shape(layout: LayoutRecord) -> tuple[int, int]:
    """Rows and columns of one 2-D tile (a 1-D buffer is one row)."""
    shape = layout.shape
    return (1, int(shape[0]) if shape else 1) if len(shape) < 2 else (int(shape[-2]), int(shape[-1]))


def bands(cols: int, width: int) -> list[tuple[int, int]]:
    """Column ranges ``[start, end)`` of a tile ``cols`` wide wrapped into bands of at most ``width`` columns.

    A band is a power of two columns wide when it must wrap, so wrapped bands stay aligned to the layout's strides.
    """
    if cols <= width:
        return [(0, cols)]
    step = 1 << max(0, int(width).bit_length() - 1)
    return [(start, min(cols, start + step)) for start in range(0, cols, step)]


def cell_labels(layout: LayoutRecord, grid: dict[str, np.ndarray]) -> np.ndarray:
    """``T<thread>/L<local>`` of every cell of a fragment grid, or the physical offset of a shared one."""
    if layout.kind is LayoutKind.FRAGMENT:
        thread, local = grid["thread"].astype(str), grid["local"].astype(str)
        return np.char.add(np.char.add("T", thread), np.char.add("/L", local))
    return grid["offset"].astype(str)


def layout_summary(layout: LayoutRecord) -> str:
    """One line about ``layout``: its threads (``threadIdx.x`` range) and replicas, or its bank conflicts."""
    if layout.kind is LayoutKind.FRAGMENT:
        start, end = thread_range(layout)
        replicas = f"{layout.replicas} replica{'s' if layout.replicas != 1 else ''}"
        warps = f"warps {start // WARP_SIZE}–{max(start, end - 1) // WARP_SIZE}"
        return f"threadIdx.x {start}–{end - 1} ({layout.threads} threads, {warps}) · {replicas}"
    if layout.offset is not None:
        return " · ".join(bank_conflicts(layout, access).describe() for access in ACCESSES)
    return "no element table"


def layout_entries(layouts: dict[str, LayoutRecord]) -> list[dict[str, Any]]:
    """The small per-layout facts the live grid lists (its synced state): no element tables."""
    entries = []
    for name, layout in layouts.items():
        rows, cols = tile_shape(layout)
        fragment = layout.kind is LayoutKind.FRAGMENT
        entries.append(
            {
                "name": name,
                "kind": layout.kind.value,
                "shape": list(layout.shape),
                "dtype": layout.dtype,
                "rows": rows,
                "cols": cols,
                "tiles": leading_count(layout),
                "replicas": layout.replicas if fragment else 1,
                "threads": list(thread_range(layout)) if fragment else None,
                "table": has_table(layout),
                "summary": layout_summary(layout),
                "description": layout.description,
            }
        )
    return entries


def grid_payload(layout: LayoutRecord, replica: int = 0, index: int = 0) -> tuple[dict[str, Any], list[bytes]]:
    """One tile of ``layout`` for the live grid: small facts, plus its tables as little-endian int32 buffers.

    Fragments send ``thread`` (absolute ``threadIdx.x``) and ``local``; shared
    layouts send ``offset`` and ``bank``. The browser derives warp and lane.
    """
    if not has_table(layout):
        raise ValueError(f"layout of {layout.buffer!r} has no element table")
    if not 0 <= index < leading_count(layout):
        raise ValueError(f"tile {index} out of range: {layout.buffer!r} has {leading_count(layout)}")
    if layout.kind is LayoutKind.FRAGMENT:
        grid, names = fragment_grid(layout, replica, index), ("thread", "local")
    else:
        grid, names, replica = shared_grid(layout, index), ("offset", "bank"), 0
    rows, cols = grid[names[0]].shape
    meta = {"kind": layout.kind.value, "rows": rows, "cols": cols, "replica": replica, "tile": index, "arrays": names}
    buffers = [np.ascontiguousarray(grid[name], dtype="<i4").tobytes() for name in names]
    return meta, buffers
