"""The Passes tab's snapshot, drawn from :func:`~tilelab.views.passes.data.passes_data` and
:func:`~tilelab.views.passes.data.passes_texts` alone: the pass list, the diff of every pass that changed
the IR and the IR after the last pass.

The snapshot carries the diffs of the changed passes, not every pass's IR, so
a saved notebook stays small.
"""

from __future__ import annotations

from typing import Any

from tilelab.views._diffhtml import PRE, diff_snapshot
from tilelab.views.html import details, escape

__all__ = ["passes_snapshot", "passes_title"]


def passes_title(data: dict[str, Any]) -> str:
    """The section's title: ``Passes (85, 36 changed)``."""
    rows = data["rows"]
    return f"Passes ({len(rows)}, {sum(1 for row in rows if row['changed'])} changed)"


def _listing(rows: list[dict[str, Any]]) -> str:
    """The pass list as aligned monospace text: index, mark, name, changed lines, time."""
    width = max(len(row["name"]) for row in rows)
    lines = [
        f"{row['index']:>3} {'●' if row['changed'] else '○'} {row['name']:<{width}}  {row['delta']:>11}  {row['time']:>11}"
        for row in rows
    ]
    return f"<pre data-tilelab='passes' style='{PRE}'>{escape(chr(10).join(lines))}</pre>"


def passes_snapshot(data: dict[str, Any], texts: dict[str, Any]) -> str:
    """The pass list (● changed the IR), the diff of every changed pass, and the IR after the last pass."""
    rows = data["rows"]
    if not rows:
        return "<p>No passes were recorded.</p>"
    titles = {row["index"]: f"#{row['index']} {row['name']} ({row['delta']})" for row in rows}
    sections = [details(titles[diff["index"]], diff_snapshot(diff)) for diff in texts["diffs"]]
    final = details("IR after the last pass", f"<pre style='{PRE}'>{escape(texts['final']['text'])}</pre>")
    return (
        _listing(rows)
        + details(f"diffs of the {len(sections)} passes that changed the IR", "".join(sections))
        + final
    )
