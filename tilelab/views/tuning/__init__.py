"""The Tuning tab: progress, the latency pivot as a heat map, the search, the timeline, and the rows as they finish.

:mod:`~tilelab.views.tuning.data` shapes a :class:`~tilelab.tune.result.TuneResult`
into one JSON-ready dict; :mod:`~tilelab.views.tuning.snapshot` renders that
dict to script-free HTML, and ``src/widgets/tuning.ts`` draws the same dict
in the live widget, a
:class:`~tilelab.views.widgets.TuningWidget` that asks for it on request (with the rows'
order when the user clicks a column's name, and the filter they type above the rows).

The view follows the run through the registry's tuning events (the sweep
announces every row there) and bumps the widget's ``revision`` (at most every
0.25 s, and once more at the end), so any view of a running sweep stays
current, the side panel's included; it stops listening when the run ends.
Without a built widget bundle the view is the snapshot, under a line that says
how to build it (updated once more when a sweep shown live ends).
"""

from __future__ import annotations

import time
from typing import Any

from tilelab.registry import default_registry
from tilelab.views._bundle import BundleView
from tilelab.views.html import sanitiser_proof
from tilelab.views.tuning import snapshot
from tilelab.views.tuning.data import (
    analysis_data,
    finished,
    pivot_data,
    progress_data,
    rows_and_pivot,
    rows_data,
    tuning_data,
)
from tilelab.views.widgets import TuningWidget, bundle_problem

__all__ = ["TuningView", "search_html"]

_MIN_INTERVAL_S = 0.25


def search_html(result: Any, reference: float | None = None) -> str:
    """Best-so-far charts and parameter importance of ``result`` (a search or a grid) as script-free HTML.

    ``reference`` (ms), e.g. the grid's best, is drawn as a dashed line.
    """
    return sanitiser_proof(snapshot.search_html(analysis_data(result, reference)))


class TuningView(BundleView):
    """Live and static rendering of a :class:`~tilelab.tune.result.TuneResult`.

    Parameters
    ----------
    result
        The sweep, finished or running.
    index, columns
        The two swept parameters of the heat map (default: the first two).
    """

    def __init__(self, result: Any, index: str | None = None, columns: str | None = None) -> None:
        self.result = result
        self.axes = (index, columns)
        self._last = 0.0
        self._unsubscribe: Any = None
        self._final: dict[str, Any] | None = None

    def data(self, sort: dict[str, Any] | None = None, row_filter: str | None = None) -> dict[str, Any]:
        """The tab's data (:func:`~tilelab.views.tuning.data.tuning_data`), made once more after the sweep has
        finished and then kept (a search's importance is measured then, by fANOVA where scikit-learn is installed,
        which is too slow to run again for each of the widget's and the snapshot's asks); ``sort`` and ``row_filter``:
        the rows' order the user clicked and the filter they typed (:func:`~tilelab.views.tuning.data.rows_data`)."""
        asked = sort is not None or row_filter is not None
        if self._final is not None:
            if asked:  # the heat map follows a filter; a sort changes only the rows
                parts = rows_and_pivot(self.result, *self.axes, sort, row_filter) if row_filter is not None else {
                    "rows": rows_data(self.result, sort=sort)
                }
                return {**self._final, **parts}
            if self._final["rows"] is None:  # kept by a sorted or filtered ask: the rows as they come, made once
                self._final["rows"] = rows_data(self.result)
            return self._final
        data = tuning_data(self.result, *self.axes, sort=sort, row_filter=row_filter)
        if finished(self.result):
            self._final = {**data, "rows": None} if asked else data
        return data

    # -- pieces of the snapshot, each from its part of the data ----------------------
    def progress_html(self) -> str:
        return snapshot.progress_html(progress_data(self.result))

    def rows_html(self) -> str:
        return snapshot.rows_html(rows_data(self.result))

    def pivot_html(self) -> str:
        return snapshot.pivot_html(pivot_data(self.result, *self.axes))

    # -- BundleView ----------------------------------------------------------------
    def _text(self) -> str:
        return repr(self.result)

    def _build_html(self) -> str:
        return snapshot.tuning_html(self.data())

    def widget_problem(self) -> str | None:
        return bundle_problem()

    def _build_widget(self):
        widget = TuningWidget({"tuning": lambda content: self.data(content.get("sort"), content.get("filter"))}, kind="tuning")
        if not finished(self.result) and self._unsubscribe is None:
            self._unsubscribe = default_registry().subscribe(self._on_event)
        return widget

    def _on_event(self, event: str, run: Any) -> None:
        if event == "tuning" and run is self.result:
            self.refresh(final=finished(run))

    def refresh(self, final: bool = False) -> None:
        """Have the live widget ask for the data again (at most every 0.25 s unless ``final``); the snapshot is rebuilt on demand."""
        self._html = None
        widget = self._widget
        closed = widget is not None and widget.comm is None  # a closed output: nothing left to follow for
        if (final or closed) and self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if widget is None or closed or (not final and time.monotonic() - self._last < _MIN_INTERVAL_S):
            return
        self._last = time.monotonic()
        widget.revision += 1
