"""A diff of two texts as JSON-ready data, shared by the Passes and Compare tabs.

:class:`~tilelab.diffs.LineDiff` decides what changed (the one rule); this
module only shapes it: CodeMirror ``Change`` ranges for the live panes (in
UTF-16 offsets, JavaScript's string indices) and the unified diff's hunks for
the snapshot, both from the same line diff.
"""

from __future__ import annotations

from typing import Any

from tilelab.diffs import LineDiff

__all__ = ["CONTEXT", "DiffData", "line_changes"]

CONTEXT = 2  # unchanged lines around each hunk of a snapshot's unified diff


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
    """A :class:`~tilelab.diffs.LineDiff` as the views take it: CodeMirror ranges and unified hunks."""

    def __init__(self, before: str, after: str, ignore_whitespace: bool = True) -> None:
        self.before, self.after = before, after
        self.diff = LineDiff(before, after, ignore_whitespace)
        self.added, self.removed = self.diff.added, self.diff.removed

    def changes(self) -> list[list[int]]:
        """``[fromA, toA, fromB, toB]`` ranges: whole lines, or words inside lines paired in a replaced block."""
        return _in_utf16(self.diff.ranges(), self.before, self.after)

    def hunks(self, context: int = CONTEXT) -> list[list[Any]]:
        """The unified diff as ``[old_start, new_start, kinds]`` per hunk (1-based starts; ``kinds`` has one
        character per row: ``" "`` an unchanged line, ``"-"`` a line of ``before``, ``"+"`` a line of ``after``)."""
        hunks = []
        for group in self.diff.matcher.get_grouped_opcodes(context):
            kinds = "".join(
                " " * (j2 - j1) if tag == "equal" else "-" * (i2 - i1) + "+" * (j2 - j1) for tag, i1, i2, j1, j2 in group
            )
            hunks.append([group[0][1] + 1, group[0][3] + 1, kinds])
        return hunks

    def changed_lines(self, side: str) -> set[int]:
        """1-based line numbers changed on ``side`` ("a": before, "b": after)."""
        return self.diff.changed_lines(side)

    def to_dict(self) -> dict[str, Any]:
        """``before``, ``after``, their ``changes`` and ``hunks``, and the lines ``added`` and ``removed``."""
        return {
            "before": self.before,
            "after": self.after,
            "changes": self.changes(),
            "hunks": self.hunks(),
            "added": self.added,
            "removed": self.removed,
        }


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
