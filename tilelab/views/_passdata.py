"""Pass lists and pass diffs as JSON-ready data, shared by the pass, compare and snapshot views."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilelab.diffs import diff_lines, line_runs, side_by_side
from tilelab.records import PassRecord

MODES = ("unified", "split")


def pass_rows(passes: Sequence[PassRecord]) -> list[dict[str, Any]]:
    """The small per-pass rows a pass list shows (no IR text)."""
    return [
        {
            "index": p.index,
            "name": p.name,
            "changed": p.changed,
            "added": p.added,
            "removed": p.removed,
            "ms": round(p.seconds * 1000, 3),
            "phase": p.phase or "",
        }
        for p in passes
    ]


def position_of(passes: Sequence[PassRecord], index: int) -> int:
    """Position in ``passes`` of the pass whose ``index`` is ``index``."""
    for position, record in enumerate(passes):
        if record.index == index:
            return position
    raise KeyError(
        f"no pass with index {index}; indices run {passes[0].index}..{passes[-1].index}" if passes else "no passes"
    )


def ir_at(passes: Sequence[PassRecord], position: int) -> str:
    """The IR after the pass at ``position`` (an unchanged pass may store no text: take the last one stored)."""
    for record in reversed(passes[: position + 1]):
        if record.ir:
            return record.ir
    return ""


def previous_changed(passes: Sequence[PassRecord], position: int) -> int | None:
    """Position of the last changed pass before ``position`` (the IR this pass started from), if any."""
    for earlier in range(position - 1, -1, -1):
        if passes[earlier].changed or earlier == 0:
            return earlier
    return None


def diff_rows(before: str, after: str, mode: str, context: int) -> list[dict[str, Any]]:
    hunks = []
    for hunk in diff_lines(before, after, context=context):
        runs = line_runs(hunk.lines)
        lines = [[line.kind, line.old_line, line.new_line, runs[i]] for i, line in enumerate(hunk.lines)]
        entry: dict[str, Any] = {"old_start": hunk.old_start, "new_start": hunk.new_start, "lines": lines}
        if mode == "split":
            entry["rows"] = side_by_side(hunk.lines)
        hunks.append(entry)
    return hunks


def pass_payload(passes: Sequence[PassRecord], index: int, mode: str = "unified", context: int = 3) -> dict[str, Any]:
    """What the browser needs to show one pass: its IR and the diff against the IR it started from."""
    if mode not in MODES:
        raise ValueError(f"diff mode {mode!r} is not one of {MODES}")
    position = position_of(passes, index)
    record = passes[position]
    after = ir_at(passes, position)
    base = previous_changed(passes, position)
    before = ir_at(passes, base) if base is not None else None
    return {
        "type": "pass",
        "index": record.index,
        "name": record.name,
        "mode": mode,
        "changed": record.changed,
        "base": None if base is None else passes[base].index,
        "base_name": None if base is None else passes[base].name,
        "ir": after,
        "hunks": [] if before is None else diff_rows(before, after, mode, context),
    }
