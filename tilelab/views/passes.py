"""The Passes tab: what the browser asks for (pass diffs, one pass's IR, IR search) and the static snapshot.

The live tab (``src/widgets/passes.ts``) keeps only the small pass rows in
synced state; every IR text travels on request through :class:`PassesData`.
The snapshot carries the diffs of the changed passes, not every pass's IR, so a
saved notebook stays small.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from tilelab.diffs import unified_rows
from tilelab.records import KernelRecord, PassRecord
from tilelab.views._passdata import ir_at, pass_diff, position_of, search_passes
from tilelab.views.html import MONO, details, escape

__all__ = ["MAX_DIFF_LINES", "MAX_LINE_CHARS", "PassesData", "diff_html", "passes_html"]

MAX_DIFF_LINES = 40  # per pass in a snapshot; the live view shows everything
MAX_LINE_CHARS = 160
_ADD = "display:block;background:rgba(46,160,67,.2)"
_DEL = "display:block;background:rgba(248,81,73,.2)"
_HUNK = "display:block;color:var(--jp-ui-font-color2,#6e7781)"
_PRE = f"{MONO};white-space:pre;overflow:auto;max-height:420px;margin:0;padding:4px;border:1px solid rgba(128,128,128,.3)"


class PassesData:
    """Answers the Passes tab's requests for one record's passes."""

    def __init__(self, passes: Sequence[PassRecord]) -> None:
        self.passes = tuple(passes)

    def diff(self, content: dict[str, Any]) -> dict[str, Any]:
        """``{"index", "base"?, "ignore_whitespace"?}`` → the two IRs and their changes."""
        base = content.get("base")
        return pass_diff(
            self.passes,
            int(content["index"]),
            None if base is None else int(base),
            bool(content.get("ignore_whitespace", True)),
        )

    def ir(self, content: dict[str, Any]) -> dict[str, Any]:
        """``{"index"}`` → the IR right after that pass."""
        position = position_of(self.passes, int(content["index"]))
        return {"index": self.passes[position].index, "name": self.passes[position].name, "text": ir_at(self.passes, position)}

    def search(self, content: dict[str, Any]) -> dict[str, Any]:
        """``{"query", "regex"?, "case"?}`` → the passes where matches first appear, grow or shrink."""
        return search_passes(
            self.passes, str(content.get("query", "")), bool(content.get("regex", False)), bool(content.get("case", False))
        )


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…\n"


def diff_html(before: str, after: str, max_lines: int | None = MAX_DIFF_LINES, context: int = 2) -> str:
    """A unified diff (whitespace-only changes ignored) as one ``<pre>``, cut after ``max_lines`` lines.

    Lines longer than :data:`MAX_LINE_CHARS` are cut too: the snapshot shows
    what changed; the live view has the whole text.
    """
    styles = {"@": _HUNK, " ": "", "-": _DEL, "+": _ADD}
    rows = [(styles[kind], (kind if kind != "@" else "") + line + "\n") for kind, line in unified_rows(before, after, context)]
    if not rows:
        return "<p>Only whitespace changed.</p>"
    shown = rows if max_lines is None else rows[:max_lines]
    parts = []
    for style, run in itertools.groupby(shown, key=lambda row: row[0]):
        text = escape("".join(_clip(line) for _, line in run))
        parts.append(f"<span style='{style}'>{text}</span>" if style else text)
    cut = f"<p style='color:var(--jp-ui-font-color2,#6e7781)'>… {len(rows) - len(shown)} more diff lines in the live view.</p>" if len(shown) < len(rows) else ""
    return f"<pre data-tilelab='diff' style='{_PRE}'>{''.join(parts)}</pre>{cut}"


def _listing(passes: Sequence[PassRecord]) -> str:
    """The pass list as aligned monospace text: index, mark, name, changed lines, time."""
    width = max(len(p.name) for p in passes)
    rows = []
    for p in passes:
        delta = f"+{p.added} −{p.removed}" if p.changed else ""
        rows.append(f"{p.index:>3} {'●' if p.changed else '○'} {p.name:<{width}}  {delta:>11}  {p.seconds * 1000:8.2f} ms")
    return f"<pre data-tilelab='passes' style='{_PRE}'>{escape(chr(10).join(rows))}</pre>"


def passes_html(record: KernelRecord) -> str:
    """The pass list (● changed the IR), the diff of every changed pass, and the IR after the last pass."""
    passes = record.passes
    if not passes:
        return "<p>No passes were recorded.</p>"
    sections = []
    for position, p in enumerate(passes):
        if not p.changed or position == 0:
            continue
        before, after = ir_at(passes, position - 1), ir_at(passes, position)
        body = diff_html(before, after)
        sections.append(details(f"#{p.index} {p.name} (+{p.added} −{p.removed})", body))
    final = details(
        "IR after the last pass", f"<pre style='{_PRE}'>{escape(ir_at(passes, len(passes) - 1))}</pre>"
    )
    return (
        _listing(passes)
        + details(f"diffs of the {len(sections)} passes that changed the IR", "".join(sections))
        + final
    )
