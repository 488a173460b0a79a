"""The tuning view: progress, the rows as they finish, and a latency heat map.

While a sweep runs, :func:`tilelab.tune` displays this view and calls
:meth:`TuningView.refresh` as rows arrive (throttled); a refresh updates the
progress bars, the table and the plotly ``FigureWidget`` heat map in place.
The static ``text/html`` snapshot holds the same progress line, the pivot
(minimum highlighted, cells shaded by latency: the heat map without scripts)
and the rows.
"""

from __future__ import annotations

import html
import math
import time
from typing import Any

from tilelab.views._bundle import BundleView

__all__ = ["TuningView"]

_BOX = "font-family:system-ui,-apple-system,Segoe UI,sans-serif;font-size:13px;line-height:1.4"
_STATUS_COLOURS = {
    "ok": "#1a7f37",
    "compile_error": "#cf222e",
    "run_error": "#cf222e",
    "mismatch": "#bf8700",
    "timeout": "#8250df",
}
_MIN_INTERVAL_S = 0.25


class TuningView(BundleView):
    """Live and static rendering of a :class:`~tilelab.tune.result.TuneResult`.

    Parameters
    ----------
    result
        The sweep, finished or running.
    index, columns
        The two swept parameters of the heat map and pivot (default: the first two).
    """

    def __init__(self, result: Any, index: str | None = None, columns: str | None = None) -> None:
        self.result = result
        self.axes = (index, columns)
        self._last = 0.0

    # -- pieces shared by the widget and the snapshot ---------------------------
    def progress_html(self) -> str:
        r = self.result
        bars = [("compiled", r.compiled + sum(1 for row in r.rows.values() if row.cached), "#0969da")]
        if r.runnable:
            bars.append(("benchmarked", r.benchmarked + sum(1 for row in r.rows.values() if row.cached), "#1a7f37"))
        bars.append(("failed", r.num_errors, "#cf222e"))
        state = "running…" if r.running else "interrupted (partial)" if r.partial else "done"
        parts = [
            f"<div style='{_BOX}'><b>{html.escape(r.kernel_name)}</b> on {html.escape(r.device)}: {r.done}/{r.total} configs, {state}</div>"
        ]
        for label, count, colour in bars:
            width = 100.0 * min(count, r.total) / max(r.total, 1)
            parts.append(
                f"<div style='{_BOX};display:flex;align-items:center;gap:8px'>"
                f"<span style='width:90px'>{label}</span>"
                f"<span style='flex:0 0 240px;height:10px;background:#eaeef2;border-radius:3px'>"
                f"<span style='display:block;height:10px;width:{width:.1f}%;background:{colour};border-radius:3px'></span></span>"
                f"<span>{count}/{r.total}</span></div>"
            )
        return "".join(parts)

    def rows_html(self, limit: int = 200) -> str:
        frame = self.result.to_pandas()
        if frame.empty:
            return f"<div style='{_BOX};color:#57606a'>no rows yet</div>"
        shown = frame.drop(columns=["device"]).tail(limit)
        styler = shown.style.format(precision=4, na_rep="").hide(axis="index")
        styler = styler.map(lambda v: f"color:{_STATUS_COLOURS.get(str(v), 'inherit')}", subset=["status"])
        return styler.set_table_attributes(f"style='{_BOX};border-collapse:collapse'").to_html()

    def _heat(self):
        """The latency pivot (rows × columns), or None when there is nothing to plot."""
        if len(self.result.swept) < 2 or not self.result.runnable:
            return None
        table = self.result.pivot_table(*self.axes)
        return None if table.isna().all().all() else table

    def pivot_html(self) -> str:
        if self._heat() is None:
            return ""
        styler = self.result.pivot(*self.axes)
        styler = styler.background_gradient(cmap="viridis_r", axis=None)
        return styler.to_html()

    # -- BundleView ----------------------------------------------------------------
    def _text(self) -> str:
        return repr(self.result)

    def _build_html(self) -> str:
        parts = [
            self.progress_html(),
            self.pivot_html(),
            "<details><summary>rows</summary>",
            self.rows_html(),
            "</details>",
        ]
        return f"<div class='tilelab-tuning'>{''.join(parts)}</div>"

    def _build_widget(self):
        import ipywidgets as widgets

        self._progress = widgets.HTML(self.progress_html())
        self._table = widgets.HTML(self.rows_html())
        plottable = self.result.runnable and len(self.result.swept) >= 2
        self._figure = self._figure_widget() if plottable else None
        return widgets.VBox([w for w in (self._progress, self._figure, self._table) if w is not None])

    def _figure_widget(self):
        import plotly.graph_objects as go

        figure = go.FigureWidget(go.Heatmap(colorscale="Viridis", reversescale=True, colorbar={"title": "ms"}))
        figure.update_layout(height=320, width=520, margin={"l": 60, "r": 20, "t": 30, "b": 50})
        self._update_figure(figure)
        return figure

    def _update_figure(self, figure: Any) -> None:
        table = self._heat()
        if figure is None or table is None:
            return
        with figure.batch_update():
            trace = figure.data[0]
            trace.z = [[None if math.isnan(v) else v for v in row] for row in table.to_numpy(dtype=float).tolist()]
            trace.x = [str(c) for c in table.columns]
            trace.y = [str(i) for i in table.index]
            figure.layout.xaxis.title = table.columns.name
            figure.layout.yaxis.title = table.index.name
            figure.layout.title = f"latency (ms): {self.result.kernel_name}"

    def refresh(self, final: bool = False) -> None:
        """Update the live widget (at most every 0.25 s unless ``final``); the snapshot is rebuilt on demand."""
        self._html = None
        if self._widget is None or (not final and time.monotonic() - self._last < _MIN_INTERVAL_S):
            return
        self._last = time.monotonic()
        self._progress.value = self.progress_html()
        self._table.value = self.rows_html()
        self._update_figure(self._figure)
