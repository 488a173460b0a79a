"""The Compare tab: two records pass by pass (e.g. sm_80 vs sm_90): ``tilelab.compare(record_a, record_b)``.

:mod:`~tilelab.views.compare.data` shapes the two records into one JSON-ready
dict; :mod:`~tilelab.views.compare.snapshot` renders that dict to script-free
HTML, and ``src/widgets/compare.ts`` renders the same dict (its synced state)
live, asking for each row's two IRs as the ``pair`` reply that the snapshot's
diff is drawn from. The lines under ``%%tilelang``'s Explorer (what changed
since the last run, why it recompiled) are :mod:`~tilelab.views.compare.changes`.
"""

from __future__ import annotations

from typing import Any

from tilelab.records import KernelRecord
from tilelab.views._bundle import BundleView
from tilelab.views.compare.data import WIDGET_KEYS, CompareData
from tilelab.views.compare.snapshot import compare_html, compare_text
from tilelab.views.widgets import CompareWidget, bundle_problem

__all__ = ["CompareView"]


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
        self.source = CompareData(record_a, record_b)
        self.selected = -1 if pass_name is None else self.source.row_of(pass_name)
        self._data: dict[str, Any] | None = None

    def data(self) -> dict[str, Any]:
        """The tab's dict (:meth:`~tilelab.views.compare.data.CompareData.data`), computed once: records do not change."""
        if self._data is None:
            self._data = self.source.data(self.selected)
        return self._data

    def row_of(self, name: str) -> int:
        """The first aligned row where either record ran pass ``name``."""
        return self.source.row_of(name)

    def payload(self, row: int, ignore_whitespace: bool = True) -> dict[str, Any]:
        """Aligned row ``row``: both passes, both IRs and the changes from ``a``'s IR to ``b``'s."""
        return self.source.pair(row, ignore_whitespace)

    def live_key(self) -> tuple[str, str, str]:
        return ("compare", self.a.id, self.b.id)

    def widget_problem(self) -> str | None:
        return bundle_problem()

    def _build_widget(self):
        def pair(content: dict[str, Any]) -> dict[str, Any]:
            return self.payload(int(content["row"]), bool(content.get("ignore_whitespace", True)))

        data = self.data()
        return CompareWidget({"pair": pair}, kind="compare", **{key: data[key] for key in WIDGET_KEYS})

    def _build_html(self) -> str:
        return compare_html(self.data())

    def _text(self) -> str:
        return compare_text(self.data())
