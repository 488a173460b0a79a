"""Pass lists, pass diffs and IR search as JSON-ready data, shared by the pass and compare views.

Diffs are CodeMirror ``Change`` ranges (character offsets into the two texts),
so the browser shows exactly the diff computed here, with or without
whitespace-only differences.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

from tilelab.diffs import ir_at
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

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
MAX_HITS = 200
SIMILAR = 0.5  # lines of a replaced block at least this alike (difflib ratio) get word-level marks


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


def _line_starts(lines: list[str]) -> list[int]:
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line)
    starts.append(at)
    return starts


def _key(line: str, ignore_whitespace: bool) -> str:
    return " ".join(line.split()) if ignore_whitespace else line.rstrip("\n")


def _word_changes(old: str, new: str, ignore_whitespace: bool) -> list[tuple[int, int, int, int]]:
    """Changed character ranges between two lines, word by word."""
    a = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(old.rstrip("\n"))]
    b = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(new.rstrip("\n"))]
    if ignore_whitespace:
        a = [t for t in a if not t[2].isspace()]
        b = [t for t in b if not t[2].isspace()]
    found = []
    matcher = difflib.SequenceMatcher(None, [t[2] for t in a], [t[2] for t in b], autojunk=False)
    if a and b and matcher.ratio() < SIMILAR:
        # Barely alike: one change over both lines reads better than a scatter of word marks.
        return [(a[0][0], a[-1][1], b[0][0], b[-1][1])]
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        from_a = a[i1][0] if i1 < len(a) else (a[-1][1] if a else 0)
        to_a = a[i2 - 1][1] if i2 > i1 else from_a
        from_b = b[j1][0] if j1 < len(b) else (b[-1][1] if b else 0)
        to_b = b[j2 - 1][1] if j2 > j1 else from_b
        found.append((from_a, to_a, from_b, to_b))
    return found


class DiffData:
    """A line diff of two texts: changed ranges for CodeMirror and the changed line counts."""

    def __init__(self, before: str, after: str, ignore_whitespace: bool = True) -> None:
        old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
        self.before, self.after = before, after
        matcher = difflib.SequenceMatcher(
            None, [_key(x, ignore_whitespace) for x in old], [_key(x, ignore_whitespace) for x in new], autojunk=False
        )
        self.opcodes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
        self.added = sum(j2 - j1 for _, _, _, j1, j2 in self.opcodes)
        self.removed = sum(i2 - i1 for _, i1, i2, _, _ in self.opcodes)
        self._old, self._new, self._ignore = old, new, ignore_whitespace

    def changes(self) -> list[list[int]]:
        """``[fromA, toA, fromB, toB]`` ranges: whole lines, or words inside lines paired in a replaced block."""
        old, new = self._old, self._new
        starts_a, starts_b = _line_starts(old), _line_starts(new)
        ranges: list[tuple[int, int, int, int]] = []
        for tag, i1, i2, j1, j2 in self.opcodes:
            paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
            for k in range(paired):
                base_a, base_b = starts_a[i1 + k], starts_b[j1 + k]
                ranges += [
                    (base_a + fa, base_a + ta, base_b + fb, base_b + tb)
                    for fa, ta, fb, tb in _word_changes(old[i1 + k], new[j1 + k], self._ignore)
                ]
            if i1 + paired < i2 or j1 + paired < j2:
                ranges.append((starts_a[i1 + paired], starts_a[i2], starts_b[j1 + paired], starts_b[j2]))
        return _in_utf16(ranges, self.before, self.after)

    def changed_lines(self, side: str) -> set[int]:
        """1-based line numbers changed on ``side`` ("a": before, "b": after)."""
        if side == "a":
            return {i + 1 for _, i1, i2, _, _ in self.opcodes for i in range(i1, i2)}
        return {j + 1 for _, _, _, j1, j2 in self.opcodes for j in range(j1, j2)}


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
