"""The tuning view: progress, the latency pivot as a heat map, the timeline, and the rows as they finish.

One set of HTML pieces serves the live widget (ipywidgets ``HTML``, updated in
place) and the script-free snapshot. Colours come from JupyterLab's CSS
variables with plain fallbacks, so light and dark themes both read; heat-map
cells carry their own background and a text colour chosen for it. Columns no
row has a value in are left out. The re-benchmark's verdict ("best by 2 %
(± 0.3 %)", or a tie) is said under the progress bars, and the rows mark the
best (★) and the configs tied with it (≈). The timeline's Gantt chart is
:mod:`tilelab.views.timeline`.

The live widget follows the run through the registry's tuning events (the
sweep announces every row there), so any view of a running sweep stays
current, the side panel's included, and stops listening when the run ends.
"""

from __future__ import annotations

import html
import math
import numbers
import time
from typing import Any

from tilelab.provenance import PROVENANCE_COLUMNS
from tilelab.registry import default_registry
from tilelab.views._bundle import BundleView
from tilelab.views.search import search_html
from tilelab.views.timeline import timeline_html

__all__ = ["TuningView", "heat_colour"]

_BOX = "font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;line-height:1.4"
_MUTED = "color:var(--jp-ui-font-color2,#6e7781)"
_CELL = "padding:2px 10px;border-bottom:1px solid var(--jp-border-color2,rgba(128,128,128,0.3));white-space:nowrap"
_OK, _ERROR = "var(--jp-success-color1,#2da44e)", "var(--jp-error-color1,#d1242f)"
_STATUS_COLOURS = {
    "ok": _OK,
    "compile_error": _ERROR,
    "run_error": _ERROR,
    "mismatch": "var(--jp-warn-color1,#bf8700)",
    "timeout": "#8250df",
}
# Viridis, reversed (fast = bright): ten stops, interpolated linearly.
_HEAT = ((253, 231, 37), (181, 222, 43), (110, 206, 88), (53, 183, 121), (31, 158, 137),
         (38, 130, 142), (49, 104, 142), (62, 73, 137), (72, 40, 120), (68, 1, 84))  # fmt: skip
_MIN_INTERVAL_S = 0.25
_ROW_LIMIT = 200


def heat_colour(fraction: float) -> tuple[str, str]:
    """Background and text colour of a heat cell at ``fraction`` (0 fastest .. 1 slowest)."""
    position = min(max(fraction, 0.0), 1.0) * (len(_HEAT) - 1)
    low = int(position)
    high, weight = min(low + 1, len(_HEAT) - 1), position - int(position)
    red, green, blue = (round(a + (b - a) * weight) for a, b in zip(_HEAT[low], _HEAT[high], strict=True))
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    return f"#{red:02x}{green:02x}{blue:02x}", "#111111" if luminance > 140 else "#f6f8fa"


def _state(result: Any) -> str:
    if result.running:
        return "running…"
    if result.partial:
        return "interrupted (partial)"
    if result.total and result.done >= result.total:
        return "done"
    return "not started yet" if result.done == 0 else f"stopped after {result.done} configs"


def _finished(result: Any) -> bool:
    """Whether ``result`` will change no more (a run announced before it starts is not finished)."""
    return bool(result.partial) or (not result.running and result.done >= result.total)


def _number(value: Any) -> str:
    """A table value as text: floats to 4 significant digits, missing values empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return f"{value:.4g}"
    return str(value)


def _gpu(state: dict) -> str:
    """``1980 MHz, 41 °C, 350 W``: what is known of the GPU's state."""
    units = (("sm_clock_mhz", "MHz"), ("temperature_c", "°C"), ("power_w", "W"))
    return ", ".join(f"{state[name]:.0f} {unit}" for name, unit in units if state.get(name) is not None) or "unknown"


def _numeric(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


def _present(value: Any) -> bool:
    return _number(value) != "" and value is not False


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

    # -- pieces shared by the widget and the snapshot ---------------------------
    def progress_html(self) -> str:
        r = self.result
        cached = sum(1 for row in r.rows.values() if row.cached)
        bars = [("compiled", r.compiled + cached, "var(--jp-brand-color1,#0969da)")]
        if r.runnable:
            bars.append(("benchmarked", r.benchmarked + cached, _OK))
        bars.append(("failed", r.num_errors, _ERROR))
        parts = [
            f"<div style='{_BOX}'><b>{html.escape(r.kernel_name)}</b> {html.escape(_where(r))}: "
            f"{r.done}/{r.total} configs, <span data-tilelab='tuning-state'>{_state(r)}</span></div>"
        ]
        for label, count, colour in bars:
            width = 100.0 * min(count, r.total) / max(r.total, 1)
            parts.append(
                f"<div style='{_BOX};display:flex;align-items:center;gap:8px'>"
                f"<span style='width:90px;{_MUTED}'>{label}</span>"
                f"<span style='flex:0 0 240px;height:8px;background:var(--jp-layout-color3,#d0d7de);border-radius:4px'>"
                f"<span style='display:block;height:8px;width:{width:.1f}%;background:{colour};"
                "border-radius:4px'></span>"
                f"</span><span>{count}/{r.total}</span></div>"
            )
        parts += [f"<div style='{_BOX};{_MUTED}'>{html.escape(note)}</div>" for note in getattr(r, "notes", [])]
        return "".join(parts) + self.trust_html()

    def trust_html(self) -> str:
        """The re-benchmark's verdict, the budget's coverage and the GPU's state at start and end (when known)."""
        r, lines = self.result, []
        if r.verdict is not None:
            lines.append(f"<span data-tilelab='tuning-verdict'>re-benchmark: {html.escape(r.verdict_text())}</span>")
        if r.budget_reached:
            lines.append(html.escape(r.coverage()))
        state = r.gpu_state or {}
        if state.get("start") and state.get("end"):
            lines.append(html.escape(f"GPU at start {_gpu(state['start'])}; at end {_gpu(state['end'])}"))
        return "".join(f"<div style='{_BOX}'>{line}</div>" for line in lines)

    def rows_html(self, limit: int = _ROW_LIMIT) -> str:
        """The latest ``limit`` rows; a column is shown only when some row has a value in it."""
        frame = self.result.to_pandas()
        if frame.empty:
            return f"<div style='{_BOX};{_MUTED}'>no rows yet</div>"
        # The key's hashes and TileLang's entry are for to_pandas() and why(); the table shows who served each compile.
        shown = frame.drop(columns=["device", *PROVENANCE_COLUMNS[1:]]).tail(limit).astype(object)
        shown = shown.where(shown.notna(), None)  # pandas' NA and NaN become None: one "missing" for every column
        marks = self._marks()
        shown.insert(0, "best", [marks.get(row.index, "") for row in self.result.ordered_rows()[-len(shown) :]])
        columns = [c for c in shown.columns if c in self.result.swept or shown[c].map(_present).any()]
        align = {c: "right" if shown[c].map(_numeric).any() else "left" for c in columns}
        head = "".join(f"<th style='{_CELL};text-align:{align[c]}'>{html.escape(str(c))}</th>" for c in columns)
        body = []
        for values in shown[columns].itertuples(index=False):
            cells = []
            for name, value in zip(columns, values, strict=True):
                colour = _STATUS_COLOURS.get(str(value)) if name == "status" else None
                style = f"{_CELL};text-align:{align[name]}" + (f";color:{colour}" if colour else "")
                cells.append(f"<td style='{style}'>{html.escape(_number(value))}</td>")
            body.append(f"<tr>{''.join(cells)}</tr>")
        return (
            f"<div style='max-height:360px;overflow:auto'><table data-tilelab='tuning-rows' style='{_BOX};"
            f"border-collapse:collapse'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        )

    def _marks(self) -> dict[int, str]:
        """After a re-benchmark with a verdict: ★ for the best row, ≈ for the rows it could not tell from the best."""
        best = self.result.best
        if self.result.verdict is None or best is None:
            return {}
        return {**dict.fromkeys(self.result.tied(), "≈"), best.index: "★"}

    def _heat(self):
        """The latency pivot (rows × columns), or None when there is nothing to plot."""
        if len(self.result.swept) < 2 or not self.result.runnable:
            return None
        table = self.result.pivot_table(*self.axes)
        return None if table.isna().all().all() else table

    def pivot_html(self) -> str:
        """Latency over two swept parameters as a heat map table (fastest bright, the minimum outlined)."""
        table = self._heat()
        if table is None:
            return ""
        values = table.to_numpy(dtype=float)
        finite = [float(v) for v in values.flat if not math.isnan(v)]
        low, high = min(finite), max(finite)
        head = "".join(f"<th style='{_CELL};text-align:right'>{html.escape(str(c))}</th>" for c in table.columns)
        rows = []
        for label, line in zip(table.index, values, strict=True):
            cells = []
            for value in line:
                if math.isnan(value):
                    cells.append(f"<td style='{_CELL};text-align:right;{_MUTED}'>—</td>")
                    continue
                background, text = heat_colour((value - low) / (high - low) if high > low else 0.0)
                best = ";font-weight:bold;outline:2px solid #e3116c;outline-offset:-2px" if value == low else ""
                cells.append(
                    f"<td data-best='{str(value == low).lower()}' style='{_CELL};text-align:right;"
                    f"background:{background};color:{text}{best}'>{value:.4g}</td>"
                )
            rows.append(f"<tr><th style='{_CELL};text-align:right'>{html.escape(str(label))}</th>{''.join(cells)}</tr>")
        corner = f"{html.escape(str(table.index.name))} \\ {html.escape(str(table.columns.name))}"
        caption = f"latency (ms) of {html.escape(self.result.kernel_name)}: fastest bright, minimum outlined"
        return (
            f"<div style='{_BOX};{_MUTED};margin-top:6px'>{caption}</div>"
            f"<table data-tilelab='tuning-pivot' style='{_BOX};border-collapse:collapse;margin:2px 0 6px'>"
            f"<thead><tr><th style='{_CELL};text-align:left;{_MUTED}'>{corner}</th>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )

    # -- BundleView ----------------------------------------------------------------
    def _text(self) -> str:
        return repr(self.result)

    def _build_html(self) -> str:
        return (
            f"<div class='tilelab-tuning'>{self.progress_html()}{self.pivot_html()}{self.search_html()}"
            f"{timeline_html(self.result)}{self.rows_html()}</div>"
        )

    def search_html(self) -> str:
        """Best-so-far and parameter importance of a search (nothing for a grid)."""
        search = getattr(self.result, "search", None)
        if search is None or getattr(search, "kind", "grid") == "grid" or not self.result.rows:
            return ""

        return search_html(self.result)

    def _build_widget(self):
        import ipywidgets as widgets

        self._progress = widgets.HTML(self.progress_html())
        self._pivot = widgets.HTML(self.pivot_html())
        self._timeline = widgets.HTML(timeline_html(self.result))
        self._table = widgets.HTML(self.rows_html())
        box = widgets.VBox([self._progress, self._pivot, self._timeline, self._table])
        box.add_class("tilelab-tuning")
        if not _finished(self.result) and self._unsubscribe is None:
            self._unsubscribe = default_registry().subscribe(self._on_event)
        return box

    def _on_event(self, event: str, run: Any) -> None:
        if event == "tuning" and run is self.result:
            self.refresh(final=_finished(run))

    def refresh(self, final: bool = False) -> None:
        """Update the live widget (at most every 0.25 s unless ``final``); the snapshot is rebuilt on demand."""
        self._html = None
        if final and self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._widget is None or (not final and time.monotonic() - self._last < _MIN_INTERVAL_S):
            return
        self._last = time.monotonic()
        self._progress.value = self.progress_html()
        self._pivot.value = self.pivot_html()
        self._table.value = self.rows_html()
        self._timeline.value = timeline_html(self.result)


def _where(result: Any) -> str:
    """``on NVIDIA H200`` for a run that ran, ``lowered for sm_90 (no device)`` for a lowering-only one."""
    device = str(result.device or "")
    if result.runnable and device:
        return f"on {device}"
    arch = getattr(result.choice, "arch", None)
    return f"lowered for {arch} (no device)" if arch else "lowered only (no device)"
