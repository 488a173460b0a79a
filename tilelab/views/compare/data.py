"""The Compare tab's data: two records' passes aligned by name, and the lines that say what changed since the last run.

The only code that shapes what ``tilelab.compare(a, b)`` and ``%tilelang diff``
show, as plain JSON types. :class:`CompareData` gives the tab's dict (the
widget's synced state, plus the diff the snapshot shows) and answers the
widget's ``pair`` request; :func:`since_data` and :func:`why_data` shape the lines
under ``%%tilelang``'s Explorer. :mod:`tilelab.views.compare.snapshot` renders
all of them.
"""

from __future__ import annotations

from typing import Any

from tilelab.diffs import align_passes, ir_at, only_in
from tilelab.records import KernelRecord
from tilelab.views._diffdata import DiffData

__all__ = ["WIDGET_KEYS", "CompareData", "since_data", "why_data"]

WIDGET_KEYS = ("labels", "rows", "only", "selected")  # what the widget keeps in synced state; IR travels on request


class CompareData:
    """The aligned passes of ``a`` and ``b`` as the Compare tab's data."""

    def __init__(self, a: KernelRecord, b: KernelRecord) -> None:
        self.a, self.b = a, b
        self.pairs = align_passes(a, b)

    def labels(self) -> list[str]:
        """``name arch`` of each record (``A: ``/``B: `` in front when both read the same)."""
        first, second = f"{self.a.name} {self.a.arch}", f"{self.b.name} {self.b.arch}"
        return [f"A: {first}", f"B: {second}"] if first == second else [first, second]

    def row_of(self, name: str) -> int:
        """The first aligned row where either record ran pass ``name``."""
        for row, (left, right) in enumerate(self.pairs):
            if name in (
                self.a.passes[left].name if left is not None else None,
                self.b.passes[right].name if right is not None else None,
            ):
                return row
        raise KeyError(f"no pass named {name!r} in either record")

    def irs_of(self, row: int) -> tuple[str, str]:
        left, right = self.pairs[row]
        return (
            ir_at(self.a.passes, left) if left is not None else "",
            ir_at(self.b.passes, right) if right is not None else "",
        )

    def rows(self) -> list[list[Any]]:
        """``[name_a, index_a, name_b, index_b, same IR]`` per aligned row (None where a record lacks the pass)."""
        rows = []
        for row, (left, right) in enumerate(self.pairs):
            pa = self.a.passes[left] if left is not None else None
            pb = self.b.passes[right] if right is not None else None
            before, after = self.irs_of(row)
            same = pa is not None and pb is not None and before == after
            rows.append(
                [
                    None if pa is None else pa.name,
                    None if pa is None else pa.index,
                    None if pb is None else pb.name,
                    None if pb is None else pb.index,
                    same,
                ]
            )
        return rows

    def pair(self, row: int, ignore_whitespace: bool = True) -> dict[str, Any]:
        """Aligned row ``row``: both passes, both IRs and the changes from ``a``'s IR to ``b``'s (the widget's ``pair`` reply)."""
        if not 0 <= row < len(self.pairs):
            raise ValueError(f"row {row} is not one of the {len(self.pairs)} aligned passes")
        left, right = self.pairs[row]
        before, after = self.irs_of(row)
        diff = DiffData(before, after, ignore_whitespace).to_dict()
        return {
            "row": row,
            "a": None if left is None else {"index": self.a.passes[left].index, "name": self.a.passes[left].name},
            "b": None if right is None else {"index": self.b.passes[right].index, "name": self.b.passes[right].name},
            "same": before == after,
            **diff,
        }

    def data(self, selected: int = -1) -> dict[str, Any]:
        """The tab's dict: ``labels``, ``rows``, ``only`` (pass names only one record ran), ``selected``,
        ``passes`` (each record's count) and ``shown``: the pair of the selected row, else of the last row
        both records ran (None without one), which the snapshot diffs."""
        both = [row for row, (left, right) in enumerate(self.pairs) if left is not None and right is not None]
        shown = selected if selected >= 0 else (both[-1] if both else -1)
        first, second = only_in(self.a, self.b)
        return {
            "labels": self.labels(),
            "rows": self.rows(),
            "only": [list(first), list(second)],
            "selected": selected,
            "passes": [len(self.a.passes), len(self.b.passes)],
            "shown": self.pair(shown) if shown >= 0 else None,
        }


def why_data(why: Any) -> dict[str, Any]:
    """A :class:`~tilelab.recompiled.WhyRecompiled` as its kernel's name and its one line."""
    return {"name": why.name, "line": why.text()}


def since_data(since: Any) -> dict[str, Any]:
    """A :class:`~tilelab.runs.SinceLastRun`: its line, the changes aspect by aspect (None: nothing compared) and why it recompiled."""
    return {
        "name": since.name,
        "run": since.run,
        "line": since.text(),
        "changes": None if since.changes is None else list(since.changes.lines()),
        "why": None if since.why is None else why_data(since.why),
    }
