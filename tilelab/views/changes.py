"""The "since the last run" line under ``%%tilelang``'s Explorer: what an edit did, in one line, details folded."""

from __future__ import annotations

from html import escape
from typing import Any

__all__ = ["SinceLastRunView"]


class SinceLastRunView:
    """A :class:`~tilelab.runs.SinceLastRun` as one escaped line of HTML (details folded) and plain text."""

    def __init__(self, since: Any) -> None:
        self.since = since

    def __repr__(self) -> str:
        return f"<SinceLastRunView {self.since.name} run {self.since.run}>"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        return {"text/html": self.to_html(), "text/plain": self.since.text()}

    def to_html(self) -> str:
        since = self.since
        style = "font-family:var(--jp-ui-font-family,sans-serif);font-size:12px;color:var(--jp-ui-font-color1,#333)"
        line = escape(since.text())
        if since.changes is None:
            return f"<div data-tilelab='since-last-run' style='{style}'>{line}</div>"
        details = "\n".join(since.changes.lines())
        hint = escape(f"%tilelang diff {since.name} shows the pass-by-pass comparison")
        return (
            f"<details data-tilelab='since-last-run' style='{style}'><summary>{line}</summary>"
            f"<pre style='margin:4px 0 4px 12px;font-family:var(--jp-code-font-family,monospace)'>{escape(details)}</pre>"
            f"<div style='margin-left:12px;opacity:.8'>{hint}</div></details>"
        )
