"""The Explorer: what ``%%tilelang`` shows for one record — tabs Overview · Passes · Source · Layouts."""

from __future__ import annotations

from typing import Any

from tilelab.records import KernelRecord
from tilelab.views._bundle import BundleView

__all__ = ["TABS", "ExplorerView"]

TABS = ("Overview", "Passes", "Source", "Layouts")


class ExplorerView(BundleView):
    """One record as a tabbed widget plus a static HTML snapshot.

    Parameters
    ----------
    record
        The :class:`~tilelab.records.KernelRecord` to show; failed records show
        their error (with its line) on the Overview and whatever ran before it.

    Notes
    -----
    The widget holds only small synced state: pass rows, selections, and the
    Overview. Pass IR and source text travel on request (custom messages), and
    the layout figure is built when the Layouts tab is first selected.
    """

    def __init__(self, record: KernelRecord) -> None:
        self.record = record

    @property
    def tabs(self):
        """The ``ipywidgets.Tab`` at the root of the widget."""
        return self.widget

    def select(self, tab: str) -> None:
        """Show tab ``tab`` (one of :data:`TABS`)."""
        if tab not in TABS:
            raise ValueError(f"tab {tab!r} is not one of {TABS}")
        self.widget.selected_index = TABS.index(tab)

    def _build_widget(self):
        import ipywidgets as widgets

        from tilelab.views.html import overview_html
        from tilelab.views.layout_view import LayoutsWidget
        from tilelab.views.passes import PassesWidget
        from tilelab.views.source import SourceWidget

        record = self.record
        overview = widgets.HTML(f"<div class='tl-overview'>{overview_html(record)}</div>")
        self.passes = PassesWidget(record)
        self.source = SourceWidget(record)
        self.layouts = LayoutsWidget(record)
        tabs = widgets.Tab(children=[overview, self.passes, self.source, self.layouts], titles=list(TABS))
        tabs.add_class("tilelab-explorer")
        tabs.observe(self._on_tab, "selected_index")
        return tabs

    def _on_tab(self, change: dict[str, Any]) -> None:
        if change["new"] == TABS.index("Layouts"):
            self.layouts.show()

    def _build_html(self) -> str:
        from tilelab.views.html import explorer_html

        return explorer_html(self.record)

    def _text(self) -> str:
        record = self.record
        if not record.ok:
            message = record.error.message.splitlines()[0] if record.error and record.error.message else "unknown error"
            return f"<TileLab Explorer {record.name} ({record.arch}) failed: {message}>"
        changed = sum(1 for p in record.passes if p.changed)
        return f"<TileLab Explorer {record.name} ({record.arch}, {record.mode.value}): {len(record.passes)} passes, {changed} changed, {len(record.layouts)} layouts>"
