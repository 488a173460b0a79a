"""Compare two records pass by pass (e.g. sm_80 vs sm_90): ``tilelab.compare(record_a, record_b)``."""

from __future__ import annotations

from typing import Any

from tilelab.diffs import align_passes, ir_at, only_in
from tilelab.records import KernelRecord
from tilelab.views._bundle import BundleView
from tilelab.views._diffdata import DiffData
from tilelab.views._diffhtml import diff_html
from tilelab.views.html import BOX, details, escape, table
from tilelab.views.widgets import CompareWidget, bundle_problem

__all__ = ["CompareView", "align_passes", "compare_html", "only_in"]






def _labels(a: KernelRecord, b: KernelRecord) -> tuple[str, str]:
    first, second = f"{a.name} {a.arch}", f"{b.name} {b.arch}"
    return (f"A: {first}", f"B: {second}") if first == second else (first, second)


class CompareView(BundleView):
    """The same passes of two records side by side, and the passes only one of them ran.

    Parameters
    ----------
    record_a, record_b
        The records to compare (typically one kernel for two architectures).
    pass_name
        Select the first aligned row with this pass name.
    """

    def __init__(self, record_a: KernelRecord, record_b: KernelRecord, pass_name: str | None = None) -> None:
        self.a, self.b = record_a, record_b
        self.pairs = align_passes(record_a, record_b)
        self.selected = -1 if pass_name is None else self._row_of(pass_name)

    def _row_of(self, name: str) -> int:
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

    def payload(self, row: int, ignore_whitespace: bool = True) -> dict[str, Any]:
        """Aligned row ``row``: both passes, both IRs and the changes from ``a``'s IR to ``b``'s."""
        if not 0 <= row < len(self.pairs):
            raise ValueError(f"row {row} is not one of the {len(self.pairs)} aligned passes")
        left, right = self.pairs[row]
        before, after = self.irs_of(row)
        diff = DiffData(before, after, ignore_whitespace)
        return {
            "row": row,
            "a": None if left is None else {"index": self.a.passes[left].index, "name": self.a.passes[left].name},
            "b": None if right is None else {"index": self.b.passes[right].index, "name": self.b.passes[right].name},
            "same": before == after,
            "before": before,
            "after": after,
            "changes": diff.changes(),
            "added": diff.added,
            "removed": diff.removed,
        }

    def aligned_rows(self) -> list[list[Any]]:
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

    def live_key(self) -> tuple[str, str, str]:
        return ("compare", self.a.id, self.b.id)

    def widget_problem(self) -> str | None:
        return bundle_problem()

    def _build_widget(self):
        def pair(content: dict[str, Any]) -> dict[str, Any]:
            return self.payload(int(content["row"]), bool(content.get("ignore_whitespace", True)))

        return CompareWidget(
            {"pair": pair},
            kind="compare",
            rows=self.aligned_rows(),
            labels=list(_labels(self.a, self.b)),
            only=list(only_in(self.a, self.b)),
            selected=self.selected,
        )

    def _build_html(self) -> str:
        return compare_html(self)

    def _text(self) -> str:
        first, second = only_in(self.a, self.b)
        label_a, label_b = _labels(self.a, self.b)
        return f"<TileLab compare {label_a} ({len(self.a.passes)} passes) vs {label_b} ({len(self.b.passes)} passes): {len(first)} + {len(second)} passes in only one>"


def compare_html(view: CompareView) -> str:
    """The snapshot: passes in only one record, the aligned passes, and the diff of the selected (or last) row."""

    label_a, label_b = _labels(view.a, view.b)
    first, second = only_in(view.a, view.b)
    rows = view.aligned_rows()
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
    both = [r for r, (left, right) in enumerate(view.pairs) if left is not None and right is not None]
    shown = view.selected if view.selected >= 0 else (both[-1] if both else -1)
    diff = ""
    if shown >= 0:
        before, after = view.irs_of(shown)
        title = f"IR after {rows[shown][0] or rows[shown][2]}: {label_a} → {label_b}"
        diff = details(title, diff_html(before, after, max_lines=400), open_=True)
    head = f"TileLab compare — {label_a} vs {label_b}"
    return (
        f"<div class='tilelab-compare' data-tilelab='compare' style='{BOX}'><div style='font-weight:600'>{escape(head)}</div>"
        + details("passes in only one record", only, open_=True)
        + details(f"aligned passes ({len(rows)})", listing)
        + diff
        + "</div>"
    )
