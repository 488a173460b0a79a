"""Pass lists, pass diffs and IR search as JSON-ready data, shared by the pass and compare views.

Diffs are CodeMirror ``Change`` ranges (character offsets into the two texts),
so the browser shows exactly the diff computed here, with or without
whitespace-only differences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tilelab.diffs import LineDiff, ir_at
from tilelab.records import PassRecord

__all__ = [
    "DiffData",
    "ir_at",
    "line_changes",
    "pass_diff",
    "pass_rows",
    "position_of",
    "previous_changed",
    "search_passes",
]

MAX_HITS = 200


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




def previous_changed(passes: Sequence[PassRecord], position: int) -> int | None:
    """Position of the last changed pass before ``position`` (the IR this pass started from), if any."""
    for earlier in range(position - 1, -1, -1):
        if passes[earlier].changed or earlier == 0:
            return earlier
    return None


def _utf16(text: str) -> list[int] | None:
    """UTF-16 offsets of each code point of ``text`` (JavaScript's string indices), or None when they are the same."""
    if text.isascii() or all(ord(c) < 0x10000 for c in text):
        return None
    offsets, at = [], 0
    for char in text:
        offsets.append(at)
        at += 2 if ord(char) >= 0x10000 else 1
    offsets.append(at)
    return offsets


class DiffData:
    """A :class:`~tilelab.diffs.LineDiff` as CodeMirror takes it: ranges in UTF-16 offsets (JavaScript's)."""

    def __init__(self, before: str, after: str, ignore_whitespace: bool = True) -> None:
        self.before, self.after = before, after
        self.diff = LineDiff(before, after, ignore_whitespace)
        self.added, self.removed = self.diff.added, self.diff.removed

    def changes(self) -> list[list[int]]:
        """``[fromA, toA, fromB, toB]`` ranges: whole lines, or words inside lines paired in a replaced block."""
        return _in_utf16(self.diff.ranges(), self.before, self.after)

    def changed_lines(self, side: str) -> set[int]:
        """1-based line numbers changed on ``side`` ("a": before, "b": after)."""
        return self.diff.changed_lines(side)


def _in_utf16(ranges: list[tuple[int, int, int, int]], before: str, after: str) -> list[list[int]]:
    ua, ub = _utf16(before), _utf16(after)
    if ua is None and ub is None:
        return [list(r) for r in ranges]
    ua = ua or list(range(len(before) + 1))
    ub = ub or list(range(len(after) + 1))
    return [[ua[fa], ua[ta], ub[fb], ub[tb]] for fa, ta, fb, tb in ranges]


def line_changes(before: str, after: str, ignore_whitespace: bool = True) -> list[list[int]]:
    """Changed ranges from ``before`` to ``after`` as CodeMirror ``Change`` offsets ``[fromA, toA, fromB, toB]``."""
    return DiffData(before, after, ignore_whitespace).changes()


def pass_diff(
    passes: Sequence[PassRecord], index: int, base: int | None = None, ignore_whitespace: bool = True
) -> dict[str, Any]:
    """Pass ``index``'s IR diffed against pass ``base`` (default: the pass before it)."""
    position = position_of(passes, index)
    base_position = position - 1 if base is None or base < 0 else position_of(passes, base)
    record = passes[position]
    after = ir_at(passes, position)
    before = ir_at(passes, base_position) if base_position >= 0 else ""
    diff = DiffData(before, after, ignore_whitespace)
    return {
        "index": record.index,
        "name": record.name,
        "changed": record.changed,
        "base": passes[base_position].index if base_position >= 0 else None,
        "base_name": passes[base_position].name if base_position >= 0 else None,
        "ignore_whitespace": ignore_whitespace,
        "before": before,
        "after": after,
        "changes": diff.changes(),
        "added": diff.added,
        "removed": diff.removed,
    }


def _counter(query: str, regex: bool, case: bool):
    flags = 0 if case else re.IGNORECASE
    pattern = re.compile(query if regex else re.escape(query), flags)
    return pattern


def search_passes(
    passes: Sequence[PassRecord], query: str, regex: bool = False, case: bool = False
) -> dict[str, Any]:
    """The passes whose IR first contains ``query``, adds matches or removes them, with the line to jump to.

    Raises
    ------
    ValueError
        When ``query`` is empty or, with ``regex``, not a valid regular expression.
    """
    if not query:
        raise ValueError("type something to search for in the IR of every pass")
    try:
        pattern = _counter(query, regex, case)
    except re.error as exc:
        raise ValueError(f"{query!r} is not a valid regular expression: {exc}") from None
    hits: list[dict[str, Any]] = []
    previous_count, previous_ir = 0, ""
    for position, record in enumerate(passes):
        ir = ir_at(passes, position)
        count = previous_count if ir == previous_ir else len(pattern.findall(ir))
        if count != previous_count:
            kind = "first" if previous_count == 0 and not any(h["kind"] == "first" for h in hits) else (
                "adds" if count > previous_count else "removes"
            )
            side_text = ir if count > previous_count else previous_ir
            changed = DiffData(previous_ir, ir, ignore_whitespace=False).changed_lines("b" if count > previous_count else "a")
            hits.append(
                {
                    "index": record.index,
                    "name": record.name,
                    "kind": kind,
                    "before": previous_count,
                    "after": count,
                    "side": "b" if count > previous_count else "a",
                    "line": _match_line(side_text, pattern, changed),
                }
            )
            if len(hits) >= MAX_HITS:
                break
        previous_count, previous_ir = count, ir
    return {"query": query, "regex": regex, "case": case, "hits": hits, "final": previous_count}


def _match_line(text: str, pattern: re.Pattern, prefer: set[int]) -> int | None:
    """The first line of ``text`` with a match, preferring lines in ``prefer`` (the changed ones)."""
    first = None
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.search(line):
            if number in prefer:
                return number
            first = first or number
    return first
