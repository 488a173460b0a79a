"""The lines under ``%%tilelang``'s Explorer: what an edit did ("since the last run", details folded) and why it
recompiled (or was a cache hit), each one escaped line, drawn by :mod:`tilelab.views.compare.snapshot` from
:mod:`tilelab.views.compare.data`'s dicts."""

from __future__ import annotations

from typing import Any

from tilelab.views.compare.data import since_data, why_data
from tilelab.views.compare.snapshot import since_html, since_text, why_html

__all__ = ["SinceLastRunView", "WhyView"]


class SinceLastRunView:
    """A :class:`~tilelab.runs.SinceLastRun` as one escaped line of HTML (details folded) and plain text,
    with the line saying which components of TileLang's cache key changed under it."""

    def __init__(self, since: Any) -> None:
        self.since = since

    def __repr__(self) -> str:
        return f"<SinceLastRunView {self.since.name} run {self.since.run}>"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        data = since_data(self.since)
        return {"text/html": since_html(data), "text/plain": since_text(data)}

    def to_html(self) -> str:
        return since_html(since_data(self.since))


class WhyView:
    """A :class:`~tilelab.recompiled.WhyRecompiled` as one escaped line: why it recompiled, or that it was a cache hit."""

    def __init__(self, why: Any) -> None:
        self.why = why

    def __repr__(self) -> str:
        return f"<WhyView {self.why.name}>"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        data = why_data(self.why)
        return {"text/html": why_html(data), "text/plain": data["line"]}

    def to_html(self) -> str:
        return why_html(why_data(self.why))
