"""A layout record's element tables as 2-D numpy tiles: what the tab's data and the figures draw from.

Thread ids are absolute (``threadIdx.x``): TileLang tabulates a fragment's
threads from 0, but on sm_90 a consumer warpgroup's fragment lives on the
threads of its ``thread_range`` (e.g. ``[128, 256)``), which the fragment's
description states. A layout with more than two dimensions is a stack of 2-D
tiles (leading dimensions flattened); a 1-D layout is one row.
"""

from __future__ import annotations

import re

import numpy as np

from tilelab.records import LayoutKind, LayoutRecord
from tilelab.views.layouts.banks import bank_map

__all__ = [
    "WARP_SIZE",
    "fragment_grid",
    "has_table",
    "leading_count",
    "shared_grid",
    "thread_range",
    "tile_shape",
]

WARP_SIZE = 32
_RANGE = re.compile(r"thread_range:\s*(?:\w+\.)?Range\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)")


def thread_range(layout: LayoutRecord) -> tuple[int, int]:
    """``[start, end)`` of the ``threadIdx.x`` values a fragment's threads are (from its description; else from 0)."""
    if layout.thread_start:
        return layout.thread_start, layout.thread_start + layout.threads
    match = _RANGE.search(layout.description or "")  # records saved before thread_start was captured
    if match is not None:
        return int(match.group(1)), int(match.group(2))
    return 0, layout.threads


def _tiles(array: np.ndarray) -> np.ndarray:
    """``array`` as a stack of 2-D tiles: leading dims flattened, a 1-D array is one row."""
    array = np.asarray(array)
    if array.ndim <= 1:
        return array.reshape(1, 1, -1)
    return array.reshape(-1, *array.shape[-2:])


def leading_count(layout: LayoutRecord) -> int:
    """How many 2-D tiles the layout has (the product of the dims before the last two)."""
    return int(np.prod(layout.shape[:-2], dtype=np.int64)) if len(layout.shape) > 2 else 1


def tile_shape(layout: LayoutRecord) -> tuple[int, int]:
    """Rows and columns of one 2-D tile (a 1-D buffer is one row)."""
    shape = layout.shape
    return (1, int(shape[0]) if shape else 1) if len(shape) < 2 else (int(shape[-2]), int(shape[-1]))


def has_table(layout: LayoutRecord) -> bool:
    """Whether the record kept the layout's element tables (very large buffers keep only the description)."""
    if layout.kind is LayoutKind.FRAGMENT:
        return layout.thread is not None and layout.local_index is not None
    return layout.offset is not None


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
