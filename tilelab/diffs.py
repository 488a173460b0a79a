"""Line and word diffs between two texts, as data (views render them).

This is the one place that counts changed lines.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tilelab.records import KernelRecord, PassRecord

__all__ = [
    "UNNAMED_PASS", "DiffLine", "Hunk", "LineDiff", "align_passes", "count_changes", "diff_lines", "ir_at", "only_in",
    "pass_change", "pass_name", "unified_rows",
]  # fmt: skip

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
# TVM's name for a Python function pass made without one. Records saved before TileLab named TileLang's four such
# passes by their call (tilelang.analysis.NestedLoopChecker...) hold it four times, and a pass whose call cannot be
# read still gets it: in either record it stands for the pass the other names at its place.
UNNAMED_PASS = "pass_fn"
SIMILAR = 0.5  # lines of a replaced block at least this alike (difflib ratio) get word-level marks


def _key(line: str, ignore_whitespace: bool) -> str:
    return " ".join(line.split()) if ignore_whitespace else line.rstrip("\n")


class LineDiff:
    """The line diff of two texts: the one rule for what changed, and how many lines.

    With ``ignore_whitespace`` (the default everywhere: the pass list, the diff's header, the
    run-to-run summary, the snapshot) lines that differ only in spaces count as the same.
    """

    def __init__(self, before: str, after: str, ignore_whitespace: bool = True) -> None:
        self.old, self.new = before.splitlines(keepends=True), after.splitlines(keepends=True)
        self.ignore_whitespace = ignore_whitespace
        self.matcher = difflib.SequenceMatcher(
            None, [_key(x, ignore_whitespace) for x in self.old], [_key(x, ignore_whitespace) for x in self.new],
            autojunk=False,
        )  # fmt: skip
        self.opcodes = [op for op in self.matcher.get_opcodes() if op[0] != "equal"]
        self.added = sum(j2 - j1 for _, _, _, j1, j2 in self.opcodes)
        self.removed = sum(i2 - i1 for _, i1, i2, _, _ in self.opcodes)

    def changed_lines(self, side: str) -> set[int]:
        """1-based line numbers changed on ``side`` ("a": before, "b": after)."""
        if side == "a":
            return {i + 1 for _, i1, i2, _, _ in self.opcodes for i in range(i1, i2)}
        return {j + 1 for _, _, _, j1, j2 in self.opcodes for j in range(j1, j2)}

    def ranges(self) -> list[tuple[int, int, int, int]]:
        """Changed ``(fromA, toA, fromB, toB)`` character ranges: whole lines, or words inside the lines paired
        in a replaced block."""
        starts_a, starts_b = _line_starts(self.old), _line_starts(self.new)
        found: list[tuple[int, int, int, int]] = []
        for tag, i1, i2, j1, j2 in self.opcodes:
            paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
            for k in range(paired):
                base_a, base_b = starts_a[i1 + k], starts_b[j1 + k]
                found += [
                    (base_a + fa, base_a + ta, base_b + fb, base_b + tb)
                    for fa, ta, fb, tb in _word_changes(self.old[i1 + k], self.new[j1 + k], self.ignore_whitespace)
                ]
            if i1 + paired < i2 or j1 + paired < j2:
                found.append((starts_a[i1 + paired], starts_a[i2], starts_b[j1 + paired], starts_b[j2]))
        return found


def count_changes(before: str, after: str) -> tuple[int, int]:
    """(lines added, lines removed) going from ``before`` to ``after``, whitespace-only differences ignored."""
    if before == after:
        return 0, 0
    diff = LineDiff(before, after)
    return diff.added, diff.removed


def pass_change(before: str | None, after: str) -> tuple[bool, int, int]:
    """(changed, lines added, lines removed) of a pass whose IR went from ``before`` (None: the first pass) to
    ``after``: any change to the text counts as changed, and a whitespace-only one as +0 −0."""
    if before is None:
        return True, after.count("\n") + 1, 0
    return (after != before, *count_changes(before, after))


def unified_rows(before: str, after: str, context: int = 2) -> list[tuple[str, str]]:
    """:func:`diff_lines` as ``(kind, line)`` rows, a hunk's header (kind ``"@"``) first; none when only whitespace changed."""
    rows: list[tuple[str, str]] = []
    for hunk in diff_lines(before, after, context):
        rows.append(("@", f"@@ -{hunk.old_start} +{hunk.new_start} @@"))
        rows += [(line.kind, line.text) for line in hunk.lines]
    return rows


@dataclass(frozen=True)
class DiffLine:
    """One line of a unified diff: ``kind`` is ' ', '+' or '-'."""

    kind: str
    text: str
    old_line: int | None  # 1-based line in the old text
    new_line: int | None  # 1-based line in the new text


@dataclass(frozen=True)
class Hunk:
    old_start: int
    new_start: int
    lines: tuple[DiffLine, ...]


def diff_lines(before: str, after: str, context: int = 3) -> list[Hunk]:
    """Unified-diff hunks from ``before`` to ``after``, by :class:`LineDiff`'s rule (whitespace-only changes are no change)."""
    diff = LineDiff(before, after)
    old = [line.rstrip("\n") for line in diff.old]
    new = [line.rstrip("\n") for line in diff.new]
    hunks = []
    for group in diff.matcher.get_grouped_opcodes(context):
        lines: list[DiffLine] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [DiffLine(" ", new[j], i1 + (j - j1) + 1, j + 1) for j in range(j1, j2)]
                continue
            lines += [DiffLine("-", old[i], i + 1, None) for i in range(i1, i2)]
            lines += [DiffLine("+", new[j], None, j + 1) for j in range(j1, j2)]
        hunks.append(Hunk(group[0][1] + 1, group[0][3] + 1, tuple(lines)))
    return hunks


def _line_starts(lines: list[str]) -> list[int]:
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line)
    starts.append(at)
    return starts


def _word_changes(old: str, new: str, ignore_whitespace: bool) -> list[tuple[int, int, int, int]]:
    """Changed character ranges between two lines, word by word."""
    a = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(old.rstrip("\n"))]
    b = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(new.rstrip("\n"))]
    if ignore_whitespace:
        a = [t for t in a if not t[2].isspace()]
        b = [t for t in b if not t[2].isspace()]
    matcher = difflib.SequenceMatcher(None, [t[2] for t in a], [t[2] for t in b], autojunk=False)
    if a and b and matcher.ratio() < SIMILAR:
        # Barely alike: one change over both lines reads better than a scatter of word marks.
        return [(a[0][0], a[-1][1], b[0][0], b[-1][1])]
    found = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        from_a = a[i1][0] if i1 < len(a) else (a[-1][1] if a else 0)
        to_a = a[i2 - 1][1] if i2 > i1 else from_a
        from_b = b[j1][0] if j1 < len(b) else (b[-1][1] if b else 0)
        to_b = b[j2 - 1][1] if j2 > j1 else from_b
        found.append((from_a, to_a, from_b, to_b))
    return found


def ir_at(passes: Sequence[PassRecord], position: int) -> str:
    """The IR after the pass at ``position`` (an unchanged pass may store no text: take the last one stored)."""
    for record in reversed(passes[: position + 1]):
        if record.ir:
            return record.ir
    return ""


def align_passes(a: KernelRecord, b: KernelRecord) -> list[tuple[int | None, int | None]]:
    """Positions of the passes of ``a`` and ``b`` matched by name in order; ``None`` where one has no such pass.
    A pass recorded as :data:`UNNAMED_PASS` matches the pass the other record has at its place."""
    names_a, names_b = [p.name for p in a.passes], [p.name for p in b.passes]
    pairs: list[tuple[int | None, int | None]] = []
    matcher = difflib.SequenceMatcher(None, names_a, names_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and _one_side_unnamed(names_a[i1:i2], names_b[j1:j2])):
            pairs += list(zip(range(i1, i2), range(j1, j2), strict=True))
            continue
        pairs += [(i, None) for i in range(i1, i2)]
        pairs += [(None, j) for j in range(j1, j2)]
    return pairs


def _one_side_unnamed(names_a: list[str], names_b: list[str]) -> bool:
    return len(names_a) == len(names_b) and all(UNNAMED_PASS in pair for pair in zip(names_a, names_b, strict=True))


def pass_name(name_a: str, name_b: str) -> str:
    """The name of an aligned pair of passes: the one that is not :data:`UNNAMED_PASS`, where one is."""
    return name_b if name_a == UNNAMED_PASS else name_a


def only_in(a: KernelRecord, b: KernelRecord) -> tuple[list[str], list[str]]:
    """Pass names that run in only ``a``, and in only ``b`` (each name once, in pipeline order); a pass that
    :func:`align_passes` matched to an unnamed one runs in both."""
    names_a, names_b = [p.name for p in a.passes], [p.name for p in b.passes]
    named = [(i, j) for i, j in align_passes(a, b) if i is not None and j is not None and names_a[i] != names_b[j]]
    matched_a, matched_b = {i for i, _ in named}, {j for _, j in named}
    in_a, in_b = set(names_a), set(names_b)
    first = list(dict.fromkeys(n for i, n in enumerate(names_a) if n not in in_b and i not in matched_a))
    second = list(dict.fromkeys(n for j, n in enumerate(names_b) if n not in in_a and j not in matched_b))
    return first, second
