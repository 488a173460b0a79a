"""The Layouts tab: a buffer picker, colour / warp / replica / tile controls and one plotly figure.

The figure (the large part: one value per element) is built only when the tab
is first shown, and is shown through plotly's mime renderer (:meth:`LayoutsWidget.show`), so the Explorer's initial widget
state stays small.
"""

from __future__ import annotations

import html
import json
from typing import Any

import ipywidgets as widgets

from tilelab.records import KernelRecord, LayoutKind, LayoutRecord
from tilelab.views.banks import ACCESSES, bank_conflicts
from tilelab.views.layout import COLORS, layout_figure, leading_count

__all__ = ["LayoutsWidget", "layout_summary"]


def layout_summary(layout: LayoutRecord) -> str:
    """One line about ``layout``: its description, threads and replicas, or its bank conflicts."""
    parts = [layout.description]
    if layout.kind is LayoutKind.FRAGMENT:
        parts.append(f"{layout.threads} threads, {layout.replicas} replica{'s' if layout.replicas != 1 else ''}")
    elif layout.offset is not None:
        parts += [bank_conflicts(layout, access).describe() for access in ACCESSES]
    return " · ".join(part for part in parts if part)


class LayoutsWidget(widgets.VBox):
    """Controls over :func:`~tilelab.views.layout.layout_figure` for every layout of one record."""

    def __init__(self, record: KernelRecord, **kwargs: Any) -> None:
        self._layouts = dict(record.layouts)
        self.figure = None  # the plotly Figure shown (built on first show)
        self.plot = None  # the Output widget that shows it
        names = list(self._layouts)
        fragments = [n for n in names if self._layouts[n].kind is LayoutKind.FRAGMENT]
        first = (fragments or names or [None])[0]
        self.buffer = widgets.Dropdown(options=names, value=first, description="buffer")
        self.color = widgets.ToggleButtons(options=list(COLORS), value="thread", description="colour")
        self.warp = widgets.Dropdown(options=[("all", -1)], value=-1, description="warp")
        self.replica = widgets.Dropdown(options=[0], value=0, description="replica")
        self.index = widgets.Dropdown(options=[0], value=0, description="tile")
        self.info = widgets.HTML()
        controls = widgets.HBox([self.buffer, self.warp, self.replica, self.index])
        if names:
            children = [controls, self.color, self.info]
        else:
            children = [
                widgets.HTML("<p>No layouts in this record (they appear after <code>tl.LayoutInference</code>).</p>")
            ]
        super().__init__(children=children, **kwargs)
        self.add_class("tl-layouts")
        self._sync_controls()
        self.buffer.observe(self._on_buffer, "value")
        for control in (self.color, self.warp, self.replica, self.index):
            control.observe(self._redraw, "value")

    @property
    def layout(self) -> LayoutRecord | None:
        return self._layouts.get(self.buffer.value)

    def show(self) -> None:
        """Build the figure if it is not built yet (called when the tab is first selected)."""
        if self.figure is None and self.layout is not None:
            self.plot = widgets.Output()
            self.children = (*self.children, self.plot)
            self._redraw()

    def _figure(self):
        warp = None if self.warp.value < 0 else self.warp.value
        return layout_figure(
            self.layout, color=self.color.value, replica=self.replica.value, warp=warp, index=self.index.value
        )

    def _sync_controls(self) -> None:
        layout = self.layout
        if layout is None:
            return
        fragment = layout.kind is LayoutKind.FRAGMENT
        warps = max(1, (layout.threads + 31) // 32) if fragment else 0
        self.warp.options = [("all", -1)] + [(str(w), w) for w in range(warps)]
        self.replica.options = list(range(layout.replicas if fragment else 1))
        self.index.options = list(range(leading_count(layout)))
        for control, visible in (
            (self.color, fragment),
            (self.warp, fragment),
            (self.replica, fragment and layout.replicas > 1),
        ):
            control.layout.display = "" if visible else "none"
        self.index.layout.display = "" if leading_count(layout) > 1 else "none"
        self.info.value = f"<p class='tl-note'>{html.escape(layout_summary(layout))}</p>"

    def _on_buffer(self, _change: Any) -> None:
        self._sync_controls()
        self._redraw()

    def _redraw(self, _change: Any = None) -> None:
        # The figure goes out as plotly's own mime type, rendered by plotly's JupyterLab extension:
        # a FigureWidget would ship its 5 MB plotly.js bundle through the widget state.
        if self.plot is None or self.layout is None:
            return
        import plotly.io as pio

        self.figure = self._figure()
        bundle = {
            "application/vnd.plotly.v1+json": json.loads(pio.to_json(self.figure, validate=False)),
            "text/plain": self.figure.layout.title.text,
        }
        self.plot.outputs = ({"output_type": "display_data", "data": bundle, "metadata": {}},)

    def __repr__(self) -> str:
        return f"<LayoutsWidget {len(self._layouts)} layouts>"
