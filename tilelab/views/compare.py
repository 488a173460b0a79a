"""Compare two records pass by pass (e.g. sm_80 vs sm_90): ``tilelab.compare(record_a, record_b)``."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from tilelab.records import KernelRecord
from tilelab.views._bundle import BundleView
from tilelab.views._passdata import diff_rows, ir_at

__all__ = ["CompareView", "align_passes", "only_in"]

_ASSETS = Path(__file__).parent / "assets"


def align_passes(a: KernelRecord, b: KernelRecord) -> list[tuple[int | None, int | None]]:
    """Positions of the passes of ``a`` and ``b`` matched by name in order; ``None`` where one has no such pass."""
    names_a, names_b = [p.name for p in a.passes], [p.name for p in b.passes]
    pairs: list[tuple[int | None, int | None]] = []
    matcher = difflib.SequenceMatcher(None, names_a, names_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs += list(zip(range(i1, i2), range(j1, j2), strict=True))
            continue
        pairs += [(i, None) for i in range(i1, i2)]
        pairs += [(None, j) for j in range(j1, j2)]
    return pairs


def only_in(a: KernelRecord, b: KernelRecord) -> tuple[list[str], list[str]]:
    """Pass names that run in only ``a``, and in only ``b`` (each name once, in pipeline order)."""
    names_a, names_b = [p.name for p in a.passes], [p.name for p in b.passes]
    first = list(dict.fromkeys(n for n in names_a if n not in set(names_b)))
    second = list(dict.fromkeys(n for n in names_b if n not in set(names_a)))
    return first, second


def _labels(a: KernelRecord, b: KernelRecord) -> tuple[str, str]:
    first, second = f"{a.name} {a.arch}", f"{b.name} {b.arch}"
    return (f"A: {first}", f"B: {second}") if first == second else (first, second)


def pair_payload(
    a: KernelRecord, b: KernelRecord, pairs: list[tuple[int | None, int | None]], row: int
) -> dict[str, Any]:
    """One aligned row: both passes' IR and the side-by-side diff from ``a``'s IR to ``b``'s."""
    left, right = pairs[row]
    ir_a = ir_at(a.passes, left) if left is not None else ""
    ir_b = ir_at(b.passes, right) if right is not None else ""
    side = {
        "a": None if left is None else {"index": a.passes[left].index, "name": a.passes[left].name},
        "b": None if right is None else {"index": b.passes[right].index, "name": b.passes[right].name},
    }
    return {"type": "pair", "row": row, **side, "same": ir_a == ir_b, "hunks": diff_rows(ir_a, ir_b, "split", 3)}


def _widget_class():
    import anywidget
    import traitlets

    class CompareWidget(anywidget.AnyWidget):
        """Aligned pass rows of two records; the selected row's diff is sent on request."""

        _esm = _ASSETS / "compare.js"
        _css = _ASSETS / "tilelab.css"
        rows = traitlets.List().tag(sync=True)
        labels = traitlets.List().tag(sync=True)
        only = traitlets.List().tag(sync=True)
        selected = traitlets.Int(-1).tag(sync=True)

        def __repr__(self) -> str:
            return f"<CompareWidget {len(self.rows)} rows>"

    return CompareWidget


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

    def payload(self, row: int) -> dict[str, Any]:
        """The message for aligned row ``row``."""
        return pair_payload(self.a, self.b, self.pairs, row)

    def _rows(self) -> list[list[Any]]:
        rows = []
        for left, right in self.pairs:
            pa = self.a.passes[left] if left is not None else None
            pb = self.b.passes[right] if right is not None else None
            same = pa is not None and pb is not None and ir_at(self.a.passes, left) == ir_at(self.b.passes, right)
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

    def _build_widget(self):
        widget = _widget_class()(
            rows=self._rows(),
            labels=list(_labels(self.a, self.b)),
            only=list(only_in(self.a, self.b)),
            selected=self.selected,
        )

        def answer(_widget: Any, content: dict[str, Any], _buffers: Any) -> None:
            if content.get("type") == "fetch" and widget.selected >= 0:
                widget.send(self.payload(widget.selected))

        widget.on_msg(answer)
        widget.observe(
            lambda change: widget.send(self.payload(change["new"])) if change["new"] >= 0 else None, "selected"
        )
        return widget

    def _build_html(self) -> str:
        from tilelab.views.html import compare_html

        return compare_html(self)

    def _text(self) -> str:
        first, second = only_in(self.a, self.b)
        label_a, label_b = _labels(self.a, self.b)
        return f"<TileLab compare {label_a} ({len(self.a.passes)} passes) vs {label_b} ({len(self.b.passes)} passes): {len(first)} + {len(second)} passes in only one>"
