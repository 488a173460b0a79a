"""ncu's source page (``ncu --import REPORT --csv --page source --print-source sass``): per kernel, the
warp-state samples at each SASS instruction.

The page is a table per profiled kernel: a ``"Kernel Name","…"`` line, a header
(``Address``, ``Source``, ``Warp Stall Sampling (All Samples)``, … one
``stall_<reason>`` column per stall reason, then the same ``(Not Issued)``), and a
row per instruction whose address is absolute (``0x7fd43b7a2200``): an
instruction's offset in its kernel is its address less the first row's.
Only instructions with samples are kept. A kernel profiled twice has a table per launch, each under the same
``"Kernel Name"`` line, in the order of ncu's launch IDs (on an H200, ncu 2025.3.1: launches of 4 and 64 blocks
gave their tables in launch order, whichever ran first).
"""

from __future__ import annotations

import csv

from tilelab.records import InstructionSamples

__all__ = ["parse_ncu_source_csv"]

_ALL = "Warp Stall Sampling (All Samples)"
_NOT_ISSUED = "Warp Stall Sampling (Not-issued Samples)"


def _count(text: str | None) -> int:
    text = (text or "").replace(",", "").strip()
    return int(float(text)) if text.replace(".", "", 1).isdigit() else 0


def _samples(row: dict[str, str], base: int) -> InstructionSamples:
    reasons = [
        (name.removeprefix("stall_"), _count(value))
        for name, value in row.items()
        if name and name.startswith("stall_") and not name.endswith("(Not Issued)")
    ]
    return InstructionSamples(
        offset=int(row["Address"], 16) - base,
        instruction=" ".join((row.get("Source") or "").split()),
        samples=_count(row.get(_ALL)),
        not_issued=_count(row.get(_NOT_ISSUED)),
        reasons=tuple(sorted(((name, count) for name, count in reasons if count), key=lambda item: -item[1])),
    )


def parse_ncu_source_csv(text: str) -> dict[str, tuple[tuple[InstructionSamples, ...], ...]]:
    """Per kernel name, a table per profiled launch in the report's order: its sampled instructions in address
    order (see the module docstring)."""
    tables: dict[str, tuple[tuple[InstructionSamples, ...], ...]] = {}
    kernel, header, base, rows = None, None, None, []

    def close() -> None:
        if kernel is not None:
            tables[kernel] = (*tables.get(kernel, ()), tuple(rows))

    for cells in csv.reader(text.splitlines()):
        if cells[:1] == ["Kernel Name"]:
            close()
            kernel, header, base, rows = (cells[1] if len(cells) > 1 else ""), None, None, []
        elif cells[:1] == ["Address"]:
            header = cells
        elif header is not None and cells and cells[0].startswith("0x"):
            row = dict(zip(header, cells, strict=False))
            base = int(cells[0], 16) if base is None else base
            if (found := _samples(row, base)).samples:
                rows.append(found)
    close()
    return tables
