"""The Layouts tab's data: the only code that shapes its JSON.

:func:`layouts_data` gives one dict of plain JSON types for a record: each
layout's facts with its first tile's tables (replica 0, tile 0), the palette
and the wrapping rule. The Explorer widget answers the tab's ``layouts``
request with it (``src/widgets/layouts.ts`` draws it), and the static snapshot
(:mod:`tilelab.views.layouts.snapshot`) renders the same dict. The widget asks
for any other tile with a ``layout_tile`` request (:func:`tile_reply`).

Colours and wrapping are decided here, once, and sent: the snapshot and the
live grid both draw from :func:`palette` and :data:`WRAP`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tilelab.records import KernelRecord, LayoutKind, LayoutRecord
from tilelab.views.layouts.banks import ACCESSES, bank_conflicts
from tilelab.views.layouts.tables import (
    WARP_SIZE,
    fragment_grid,
    has_table,
    leading_count,
    shared_grid,
    thread_range,
    tile_shape,
)

__all__ = ["WRAP", "layout_entry", "layout_summary", "layout_tile", "layouts_data", "palette", "tile_reply"]

# How a wide tile wraps: the live grid wraps a tile of at most ``rows`` rows into bands instead of scrolling
# sideways; a band is a multiple of ``align`` columns wide (a power of two when narrower), so wrapped bands stay
# aligned to the layout's strides. The snapshot wraps its tables and warp map by the same rule.
WRAP = {"rows": 16, "align": 8}


def palette() -> dict[str, Any]:
    """The cell colours of the grid and the snapshot (HSL: hue in degrees, saturation and lightness in %).

    A warp's cells take its categorical hue, a shade per ``lane % shades`` (so neighbouring threads differ);
    threads, local indices and banks take golden-angle hues (neighbouring values differ). Light themes get pale
    cells with dark text, dark themes deep ones with light text; ``muted`` cells are outside the warp filter.
    The snapshot (a page with no theme) draws the light colours, and banks a little deeper (``bank``).
    """
    return {
        "hues": [212, 28, 134, 352, 268, 48, 188, 318, 90, 240, 8, 160],  # warps 0, 1, 2, ... (cycled)
        "shades": 4,
        "golden_angle": 137.508,
        "light": {"saturation": 62, "lightness": 82, "shade_step": -5, "text": "#111", "muted": ["#ececec", "#9a9a9a"]},
        "dark": {
            "saturation": 42,
            "lightness": 30,
            "shade_step": 4,
            "text": "#f2f2f2",
            "muted": ["#2a2a2a", "#6e6e6e"],
        },
        "bank": {"saturation": 60, "lightness": 78},
    }


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


def layout_tile(layout: LayoutRecord, replica: int = 0, index: int = 0) -> dict[str, Any]:
    """One 2-D tile's tables, row-major flat lists: ``thread`` (absolute ``threadIdx.x``) and ``local`` of a
    fragment, ``offset`` (physical element offset) and ``bank`` (32-bank id) of a shared layout."""
    if not has_table(layout):
        raise ValueError(f"layout of {layout.buffer!r} has no element table")
    if not 0 <= index < leading_count(layout):
        raise ValueError(f"tile {index} out of range: {layout.buffer!r} has {leading_count(layout)}")
    if layout.kind is LayoutKind.FRAGMENT:
        grid, names = fragment_grid(layout, replica, index), ("thread", "local")
    else:
        grid, names, replica = shared_grid(layout, index), ("offset", "bank"), 0
    rows, cols = grid[names[0]].shape
    tables = {name: grid[name].astype(int).reshape(-1).tolist() for name in names}
    return {"replica": replica, "tile": index, "rows": int(rows), "cols": int(cols), **tables}


def layout_entry(name: str, layout: LayoutRecord) -> dict[str, Any]:
    """One layout's facts and its first tile (``None`` when the record kept no table)."""
    rows, cols = tile_shape(layout)
    fragment = layout.kind is LayoutKind.FRAGMENT
    return {
        "name": name,
        "buffer": layout.buffer,
        "kind": layout.kind.value,
        "shape": [int(n) for n in layout.shape],
        "dtype": layout.dtype,
        "rows": rows,
        "cols": cols,
        "tiles": leading_count(layout),
        "replicas": layout.replicas if fragment else 1,
        "threads": list(thread_range(layout)) if fragment else None,
        "table": has_table(layout),
        "summary": layout_summary(layout),
        "description": layout.description,
        "tile": layout_tile(layout) if has_table(layout) else None,
    }


def layouts_data(record: KernelRecord) -> dict[str, Any]:
    """The Layouts tab of ``record``: every layout's facts and first tile, the palette and the wrapping rule."""
    return {
        "layouts": [layout_entry(name, layout) for name, layout in record.layouts.items()],
        "palette": palette(),
        "wrap": dict(WRAP),
    }


def tile_reply(layouts: Mapping[str, LayoutRecord], content: Mapping[str, Any]) -> dict[str, Any]:
    """The answer to a ``layout_tile`` request ``{"name", "replica", "tile"}``: the tile named, or ValueError."""
    name, replica, tile = content.get("name"), content.get("replica", 0), content.get("tile", 0)
    layout = layouts.get(name) if isinstance(name, str) else None
    if layout is None:
        raise ValueError(f"no layout called {name!r} in this record")
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in (replica, tile)):
        raise ValueError("replica and tile must be integers")
    return {"name": name, **layout_tile(layout, replica, tile)}
