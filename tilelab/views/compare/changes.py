"""The lines under ``%%tilelang``'s Explorer: what an edit did ("since the last run", details folded) and why it
recompiled (or was a cache hit), each one escaped line, drawn by :mod:`tilelab.views.compare.snapshot` from
:mod:`tilelab.views.compare.data`'s dicts."""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any

from tilelab.views.compare.data import since_data, why_data
from tilelab.views.compare.snapshot import since_html, since_text, why_html
from tilelab.views.html import sanitiser_proof

__all__ = ["SinceLastRunView", "WhyView"]


class _LineView:
    """One escaped line of HTML and its plain text: ``drawn_by`` is (its data dict of the item, that dict's HTML, its text)."""

    drawn_by: tuple[Callable[[Any], dict], Callable[[dict], str], Callable[[dict], str]]

    def __init__(self, item: Any) -> None:
        self.item = item

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.item.name}>"

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        data_of, _, text = self.drawn_by
        data = data_of(self.item)
        return {"text/html": self._html(data), "text/plain": text(data)}

    def to_html(self) -> str:
        return self._html(self.drawn_by[0](self.item))

    def _html(self, data: dict) -> str:
        return sanitiser_proof(self.drawn_by[1](data))


class SinceLastRunView(_LineView):
    """A :class:`~tilelab.runs.SinceLastRun` as one escaped line of HTML (details folded) and plain text,
    with the line saying which components of TileLang's cache key changed under it."""

    drawn_by = (since_data, since_html, since_text)

    @property
    def since(self) -> Any:
        return self.item


class WhyView(_LineView):
    """A :class:`~tilelab.recompiled.WhyRecompiled` as one escaped line: why it recompiled, or that it was a cache hit."""

    drawn_by = (why_data, why_html, itemgetter("line"))

    @property
    def why(self) -> Any:
        return self.item
