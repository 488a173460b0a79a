"""A diff's snapshot: the unified diff of a diff dict (``before``, ``after``, ``hunks``) as one ``<pre>``.

Shared by the Passes and Compare snapshots. It draws the hunks it is given
(see :meth:`tilelab.views._diffdata.DiffData.hunks`) and diffs nothing itself.
"""

from __future__ import annotations

import itertools
from typing import Any

from tilelab.views.html import MONO, escape

__all__ = ["MAX_DIFF_LINES", "MAX_LINE_CHARS", "PRE", "diff_snapshot", "unified_rows"]

MAX_DIFF_LINES = 40  # per pass in a snapshot; the live view shows everything
MAX_LINE_CHARS = 160
PRE = f"{MONO};white-space:pre;overflow:auto;max-height:420px;margin:0;padding:4px;border:1px solid rgba(128,128,128,.3)"
_ADD = "display:block;background:rgba(46,160,67,.2)"
_DEL = "display:block;background:rgba(248,81,73,.2)"
_HUNK = "display:block;color:var(--jp-ui-font-color2,#6e7781)"


def _lines(text: str) -> list[str]:
    return [line.rstrip("\n") for line in text.splitlines(keepends=True)]


def unified_rows(diff: dict[str, Any]) -> list[tuple[str, str]]:
    """``(kind, line)`` rows of ``diff``'s hunks, each hunk's header (kind ``"@"``) first."""
    old, new = _lines(diff["before"]), _lines(diff["after"])
    rows: list[tuple[str, str]] = []
    for old_start, new_start, kinds in diff["hunks"]:
        rows.append(("@", f"@@ -{old_start} +{new_start} @@"))
        i, j = old_start - 1, new_start - 1
        for kind in kinds:
            rows.append((kind, old[i] if kind == "-" else new[j]))
            i, j = i + (kind != "+"), j + (kind != "-")
    return rows


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…\n"


def diff_snapshot(diff: dict[str, Any], max_lines: int | None = MAX_DIFF_LINES) -> str:
    """``diff`` as a unified diff in one ``<pre>``, cut after ``max_lines`` lines.

    Lines longer than :data:`MAX_LINE_CHARS` are cut too: the snapshot shows
    what changed; the live view has the whole text.
    """
    styles = {"@": _HUNK, " ": "", "-": _DEL, "+": _ADD}
    rows = [(styles[kind], (kind if kind != "@" else "") + line + "\n") for kind, line in unified_rows(diff)]
    if not rows:
        return "<p>Only whitespace changed.</p>"
    shown = rows if max_lines is None else rows[:max_lines]
    parts = []
    for style, run in itertools.groupby(shown, key=lambda row: row[0]):
        text = escape("".join(_clip(line) for _, line in run))
        parts.append(f"<span style='{style}'>{text}</span>" if style else text)
    cut = f"<p style='color:var(--jp-ui-font-color2,#6e7781)'>… {len(rows) - len(shown)} more diff lines in the live view.</p>" if len(shown) < len(rows) else ""
    return f"<pre data-tilelab='diff' style='{PRE}'>{''.join(parts)}</pre>{cut}"
