"""The Compare tab's snapshot: script-free HTML (and the short text) rendered from :mod:`tilelab.views.compare.data`'s dicts alone.

:func:`compare_html` draws the passes only one record ran, the aligned passes
and the diff of the shown row; :func:`since_html` and :func:`why_html` draw the
lines under ``%%tilelang``'s Explorer (details folded). Every string is escaped.
"""

from __future__ import annotations

from typing import Any

from tilelab.views._diffhtml import diff_snapshot
from tilelab.views.html import BOX, details, escape, table

__all__ = ["compare_html", "compare_text", "since_html", "since_text", "why_html"]

_DIFF_LINES = 400
_STYLE = "font-family:var(--jp-ui-font-family,sans-serif);font-size:12px;color:var(--jp-ui-font-color1,#333)"


def compare_html(data: dict[str, Any]) -> str:
    """The passes in only one record, the aligned passes, and the diff of the shown row."""
    label_a, label_b = data["labels"]
    first, second = data["only"]
    rows = data["rows"]
    listing = table(
        [
            (escape(na if na is not None else "—"), escape(nb if nb is not None else "—"), "same IR" if same else "differs")
            for na, _, nb, _, same in rows
        ],
        (label_a, label_b, ""),
        attrs=" data-tilelab='compare-rows'",
    )
    only = table(
        [(escape(label_a), escape(", ".join(first) or "none")), (escape(label_b), escape(", ".join(second) or "none"))],
        ("only in", "passes"),
        attrs=" data-tilelab='only-in'",
    )
    shown, diff = data["shown"], ""
    if shown is not None:
        name_a, _, name_b, _, _ = rows[shown["row"]]
        title = f"IR after {name_a or name_b}: {label_a} → {label_b}"
        # As the widget says it: diff_snapshot cannot tell identical texts from a whitespace-only change.
        body = "<p>Identical IR in both records.</p>" if shown["same"] else diff_snapshot(shown, max_lines=_DIFF_LINES)
        diff = details(title, body, open_=True)
    head = f"TileLab compare — {label_a} vs {label_b}"
    return (
        f"<div class='tilelab-compare' data-tilelab='compare' style='{BOX}'><div style='font-weight:600'>{escape(head)}</div>"
        + details("passes in only one record", only, open_=True)
        + details(f"aligned passes ({len(rows)})", listing)
        + diff
        + "</div>"
    )


def compare_text(data: dict[str, Any]) -> str:
    """The ``text/plain``: both labels, their pass counts, and how many passes only one ran."""
    (label_a, label_b), (count_a, count_b) = data["labels"], data["passes"]
    first, second = data["only"]
    return (
        f"<TileLab compare {label_a} ({count_a} passes) vs {label_b} ({count_b} passes): "
        f"{len(first)} + {len(second)} passes in only one>"
    )


def why_html(why: dict[str, Any]) -> str:
    """Why it recompiled (or was a cache hit), one line."""
    return f"<div data-tilelab='why' style='{_STYLE};opacity:.85'>{escape(why['line'])}</div>"


def since_html(since: dict[str, Any]) -> str:
    """What an edit did since the last run, one line; its changes aspect by aspect folded under it; then why."""
    why = why_html(since["why"]) if since["why"] is not None else ""
    line = escape(since["line"])
    if since["changes"] is None:
        return f"<div data-tilelab='since-last-run' style='{_STYLE}'>{line}</div>{why}"
    hint = escape(f"%tilelang diff {since['name']} shows the pass-by-pass comparison")
    return (
        f"<details data-tilelab='since-last-run' style='{_STYLE}'><summary>{line}</summary>"
        f"<pre style='margin:4px 0 4px 12px;font-family:var(--jp-code-font-family,monospace)'>{escape(chr(10).join(since['changes']))}</pre>"
        f"<div style='margin-left:12px;opacity:.8'>{hint}</div></details>{why}"
    )


def since_text(since: dict[str, Any]) -> str:
    """The ``text/plain``: the line, and why on the next."""
    return since["line"] + (f"\n{since['why']['line']}" if since["why"] is not None else "")
