"""The lines under ``%%tilelang``'s Explorer: what an edit did ("since the last run", details folded) and why it
recompiled (or was a cache hit), each one escaped line."""

from __future__ import annotations

from html import escape
from typing import Any

__all__ = ["SinceLastRunView", "WhyView"]

_STYLE = "font-family:var(--jp-ui-font-family,sans-serif);font-size:12px;color:var(--jp-ui-font-color1,#333)"


class SinceLastRunView:
    """A :class:`~tilelab.runs.SinceLastRun` as one escaped line of HTML (details folded) and plain text,
    with the line saying which components of TileLang's cache key changed under it."""

    def __init__(self, since: Any) -> None:
        self.since = since

    def __repr__(self) -> str:
        return f"<SinceLastRunView {self.since.name} run {self.since.run}>"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        why = self.since.why
        text = self.since.text() + (f"\n{why.text()}" if why is not None else "")
        return {"text/html": self.to_html(), "text/plain": text}

    def to_html(self) -> str:
        since = self.since
        why = WhyView(since.why).to_html() if since.why is not None else ""
        line = escape(since.text())
        if since.changes is None:
            return f"<div data-tilelab='since-last-run' style='{_STYLE}'>{line}</div>{why}"
        details = "\n".join(since.changes.lines())
        hint = escape(f"%tilelang diff {since.name} shows the pass-by-pass comparison")
        return (
            f"<details data-tilelab='since-last-run' style='{_STYLE}'><summary>{line}</summary>"
            f"<pre style='margin:4px 0 4px 12px;font-family:var(--jp-code-font-family,monospace)'>{escape(details)}</pre>"
            f"<div style='margin-left:12px;opacity:.8'>{hint}</div></details>{why}"
        )


class WhyView:
    """A :class:`~tilelab.recompiled.WhyRecompiled` as one escaped line: why it recompiled, or that it was a cache hit."""

    def __init__(self, why: Any) -> None:
        self.why = why

    def __repr__(self) -> str:
        return f"<WhyView {self.why.name}>"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        return {"text/html": self.to_html(), "text/plain": self.why.text()}

    def to_html(self) -> str:
        return f"<div data-tilelab='why' style='{_STYLE};opacity:.85'>{escape(self.why.text())}</div>"
