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
    "DiffLine",
    "Hunk",
    "align_passes",
    "count_changes",
    "diff_lines",
    "ir_at",
    "line_runs",
    "only_in",
    "side_by_side",
    "word_diff",
]

_WORD = re.compile(r"\w+|\s+|[^\w\s]")


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


def _split(text: str) -> list[str]:
    return text.splitlines()


def count_changes(before: str, after: str) -> tuple[int, int]:
    """(lines added, lines removed) going from ``before`` to ``after``."""
    if before == after:
        return 0, 0
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, _split(before), _split(after), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def diff_lines(before: str, after: str, context: int = 3) -> list[Hunk]:
    """Unified-diff hunks from ``before`` to ``after``."""
    old, new = _split(before), _split(after)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    hunks = []
    for group in matcher.get_grouped_opcodes(context):
        lines: list[DiffLine] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [DiffLine(" ", old[i], i + 1, j1 + (i - i1) + 1) for i in range(i1, i2)]
                continue
            lines += [DiffLine("-", old[i], i + 1, None) for i in range(i1, i2)]
            lines += [DiffLine("+", new[j], None, j + 1) for j in range(j1, j2)]
        hunks.append(Hunk(group[0][1] + 1, group[0][3] + 1, tuple(lines)))
    return hunks


def word_diff(old_line: str, new_line: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Token runs of two lines, each flagged True where it differs from the other line."""
    old, new = _WORD.findall(old_line), _WORD.findall(new_line)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    old_runs: list[tuple[str, bool]] = []
    new_runs: list[tuple[str, bool]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 > i1:
            old_runs.append(("".join(old[i1:i2]), tag != "equal"))
        if j2 > j1:
            new_runs.append(("".join(new[j1:j2]), tag != "equal"))
    return old_runs, new_runs


def line_runs(lines: tuple[DiffLine, ...] | list[DiffLine]) -> list[list[tuple[str, bool]]]:
    """Word runs for each line of a hunk: a removed block is paired line by line with the added block after it."""
    runs: list[list[tuple[str, bool]]] = [[(line.text, line.kind != " ")] for line in lines]
    i = 0
    while i < len(lines):
        if lines[i].kind != "-":
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].kind == "-":
            i += 1
        added = i
        while i < len(lines) and lines[i].kind == "+":
            i += 1
        for old, new in zip(range(start, added), range(added, i), strict=False):
            runs[old], runs[new] = word_diff(lines[old].text, lines[new].text)
    return runs


def side_by_side(lines: tuple[DiffLine, ...] | list[DiffLine]) -> list[tuple[int | None, int | None]]:
    """Rows of a two-column diff as (index into ``lines`` or None, same) for the old and new side."""
    rows: list[tuple[int | None, int | None]] = []
    i = 0
    while i < len(lines):
        if lines[i].kind == " ":
            rows.append((i, i))
            i += 1
            continue
        removed = []
        while i < len(lines) and lines[i].kind == "-":
            removed.append(i)
            i += 1
        added = []
        while i < len(lines) and lines[i].kind == "+":
            added.append(i)
            i += 1
        for k in range(max(len(removed), len(added))):
            rows.append((removed[k] if k < len(removed) else None, added[k] if k < len(added) else None))
    return rows

def ir_at(passes: Sequence[PassRecord], position: int) -> str:
    """The IR after the pass at ``position`` (an unchanged pass may store no text: take the last one stored)."""
    for record in reversed(passes[: position + 1]):
        if record.ir:
            return record.ir
    return ""


def align_passes(a: KernelRecord, b: KernelRecord) -> list[tuple[int | None, int | None]]:
    """Positions of the passes of ``a`` and ``b`` matched by name in order; ``None`` where one has no such pass."""
    names_a, names_b = [p.name for p in a.passes], [p.name for p in b.passes]
    pairs: list[tuple[int | None, int | None]] = []
    matcher = difflib.SequenceMatcher(None, names_a, names_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs += list(zip(range(i1, i2), range(j1, j2), strict=True))
            continue
        pairs += [(i, None) for i in range(i1, i2)]
        pairs += [(None, j) for j in range(j1, j2)]
    return pairs


def only_in(a: KernelRecord, b: KernelRecord) -> tuple[list[str], list[str]]:
    """Pass names that run in only ``a``, and in only ``b`` (each name once, in pipeline order)."""
    names_a, names_b = [p.name for p in a.passes], [p.name for p in b.passes]
    first = list(dict.fromkeys(n for n in names_a if n not in set(names_b)))
    second = list(dict.fromkeys(n for n in names_b if n not in set(names_a)))
    return first, second
