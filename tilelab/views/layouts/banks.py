"""Shared-memory bank maps and bank-conflict counts of a layout's physical offsets (pure numpy).

Model: 32 banks of 4-byte words. An element at physical element offset ``o``
of a buffer with ``b``-byte elements lies in word ``o * b // 4`` and bank
``(o * b // 4) % 32``.

A *row-wise access* is a warp of 32 lanes reading the tile in logical
row-major order, one 4-byte word per lane: the tile is cut into words of
``max(1, 4 // b)`` logically consecutive elements of a row (the word address
is that of its first element), words are numbered row by row, and lanes
``0..31`` of request ``k`` read words ``32k .. 32k + 31`` (so a request covers
one row, part of a long row, or several short rows). A *column-wise access*
numbers the words column by column instead (lane ``t`` reads row ``t`` of one
word column, the pattern ``ldmatrix`` and transposed loads resemble).

A request needs as many wavefronts as the largest number of *distinct* words
that fall in one bank (lanes reading the same word are served by broadcast).
``extra_wavefronts`` is the sum over requests of ``wavefronts - 1``: 0 means
conflict-free; ``worst`` is the largest per-request wavefront count
(a ``worst``-way conflict). Leading dimensions of a tile with more than two
dimensions are flattened into rows; a 1-D tile is one row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilelab.records import LayoutRecord

__all__ = ["ACCESSES", "BankConflicts", "bank_conflicts", "bank_map", "word_addresses"]

BANKS = 32
ACCESSES = ("row", "column")


@dataclass(frozen=True)
class BankConflicts:
    """Wavefront counts of one access pattern over a shared buffer (see the module docstring)."""

    access: str
    requests: int
    wavefronts: int
    worst: int

    @property
    def extra_wavefronts(self) -> int:
        return self.wavefronts - self.requests

    @property
    def conflict_free(self) -> bool:
        return self.extra_wavefronts == 0

    def describe(self) -> str:
        if self.conflict_free:
            return f"{self.access}-wise warp access: conflict-free ({self.requests} requests)"
        return (
            f"{self.access}-wise warp access: {self.extra_wavefronts} extra wavefronts over {self.requests} requests "
            f"(worst {self.worst}-way)"
        )


def _offsets_2d(layout: LayoutRecord) -> np.ndarray:
    if layout.offset is None:
        raise ValueError(f"layout of {layout.buffer!r} has no physical offsets (kind {layout.kind.value})")
    offset = np.asarray(layout.offset, dtype=np.int64)
    if offset.ndim == 1:
        return offset.reshape(1, -1)
    return offset.reshape(-1, offset.shape[-1])


def bank_map(layout: LayoutRecord) -> np.ndarray:
    """The 32-bank id of every element, shape ``layout.shape``."""
    if layout.offset is None:
        raise ValueError(f"layout of {layout.buffer!r} has no physical offsets (kind {layout.kind.value})")
    return (np.asarray(layout.offset, dtype=np.int64) * layout.element_bytes // 4) % BANKS


def word_addresses(layout: LayoutRecord, access: str = "row") -> np.ndarray:
    """Word address read by each lane, in lane order over all requests (see the module docstring)."""
    if access not in ACCESSES:
        raise ValueError(f"access {access!r} is not one of {ACCESSES}")
    offsets = _offsets_2d(layout)
    per_word = max(1, 4 // layout.element_bytes)
    words = offsets[:, ::per_word] * layout.element_bytes // 4
    return (words if access == "row" else words.T).reshape(-1)


def bank_conflicts(layout: LayoutRecord, access: str = "row") -> BankConflicts:
    """Requests, wavefronts and the worst conflict of a warp-wide ``access`` over the whole tile."""
    addresses = word_addresses(layout, access)
    wavefronts = worst = requests = 0
    for start in range(0, len(addresses), BANKS):
        distinct = np.unique(addresses[start : start + BANKS])
        need = int(np.bincount(distinct % BANKS, minlength=BANKS).max())
        requests += 1
        wavefronts += need
        worst = max(worst, need)
    return BankConflicts(access, requests, wavefronts, worst)
