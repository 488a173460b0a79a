"""The Tuning tab's data: a :class:`~tilelab.tune.result.TuneResult` as one JSON-ready dict.

The only code that shapes what the tuning view shows: :func:`tuning_data`
returns plain JSON types (str, int, float, bool, None, lists, dicts; no NaN),
which :mod:`tilelab.views.tuning.snapshot` renders to script-free HTML and
``src/widgets/tuning.ts`` draws live. Labels, formatted numbers, colours
(:mod:`~tilelab.views.tuning.colours`) and the charts' geometry are decided
here, once; both renderers only draw them. Its parts:

- ``progress``: the kernel, where it ran, counts, state, the bars, notes and the re-benchmark's verdict;
- ``pivot``: latency over two swept parameters, each cell's text and colours (None without two, or without timings);
- ``search``: best-so-far curves and parameter importance, and their charts laid out (None for a grid):
  :mod:`~tilelab.views.tuning.data_search`;
- ``timeline``: the phases of the first :data:`TIMELINE_ROWS` configs as a Gantt chart (None before any was recorded);
- ``rows``: the latest rows as text, or the first by a column the user sorts on, of those the user's filter keeps
  (:mod:`~tilelab.views.tuning.row_filter`), only the columns some row has a value in, statuses coloured:
  :mod:`~tilelab.views.tuning.data_rows`;
- ``text``: the short ``text/plain``.
"""

from __future__ import annotations

import math
from typing import Any

from tilelab.targets import why_lowered
from tilelab.views.tuning.colours import BAR_COLOURS, BEST_MARK, heat_colour
from tilelab.views.tuning.data_rows import ROW_LIMIT, Selection, decimals, rows_data, rows_table, select_rows
from tilelab.views.tuning.data_search import analysis_data, best_so_far_curve, search_data
from tilelab.views.tuning.data_timeline import TIMELINE_ROWS, timeline_data
from tilelab.views.tuning.row_filter import filter_for

__all__ = [
    "ROW_LIMIT",
    "TIMELINE_ROWS",
    "analysis_data",
    "best_so_far_curve",
    "finished",
    "pivot_data",
    "progress_data",
    "rows_and_pivot",
    "rows_data",
    "search_data",
    "timeline_data",
    "tuning_data",
]


def tuning_data(
    result: Any,
    index: str | None = None,
    columns: str | None = None,
    sort: dict[str, Any] | None = None,
    row_filter: str | None = None,
) -> dict[str, Any]:
    """Everything the tuning view shows of ``result``; ``index``/``columns``: the heat map's axes; ``sort`` and
    ``row_filter``: the rows' order and filter (:func:`rows_data`)."""
    return {
        "progress": progress_data(result),
        **rows_and_pivot(result, index, columns, sort, row_filter),
        "search": search_data(result, final=finished(result)),
        "timeline": timeline_data(result),
        "text": repr(result),
    }


def finished(result: Any) -> bool:
    """Whether ``result`` will change no more (a run announced before it starts is not finished; one whose
    wall-clock budget ran out is, with configs never started)."""
    ended = result.done >= result.total or bool(getattr(result, "budget_reached", False))
    return bool(result.partial) or (not result.running and ended)


# -- progress ------------------------------------------------------------------------------------------------
def progress_data(result: Any) -> dict[str, Any]:
    """Counts, state, the bars (compiled, benchmarked when runnable, failed), notes and what the re-benchmark said."""
    r = result
    cached = sum(1 for row in r.rows.values() if row.cached)
    counts = {"compiled": r.compiled + cached, "benchmarked": r.benchmarked + cached if r.runnable else None, "failed": r.num_errors}
    bars = [_bar(label, count, r.total) for label, count in counts.items() if count is not None]
    state = r.gpu_state or {}
    gpu = None
    if state.get("start") and state.get("end"):
        gpu = f"GPU at start {_gpu(state['start'])}; at end {_gpu(state['end'])}"
    return {
        "kernel": r.kernel_name,
        "where": _where(r),
        "done": r.done,
        "total": r.total,
        "counts": f"{r.done}/{r.total} configs",
        "state": _state(r),
        "bars": bars,
        "notes": [str(note) for note in getattr(r, "notes", [])],
        "verdict": f"re-benchmark: {r.verdict_text()}" if r.verdict is not None else None,
        "coverage": r.coverage() if r.budget_reached else None,
        "gpu": gpu,
    }


def _bar(label: str, count: int, total: int) -> dict[str, Any]:
    """One progress bar: its fill (0..100) and colour, and ``count/total`` as text."""
    width = 100.0 * min(count, total) / max(total, 1)
    return {"label": label, "count": count, "text": f"{count}/{total}", "width": round(width, 1), "colour": BAR_COLOURS[label]}


def _state(result: Any) -> str:
    if result.running:
        return "running…"
    if result.partial:
        return "interrupted (partial)"
    if result.total and result.done >= result.total:
        return "done"
    return "not started yet" if result.done == 0 else f"stopped after {result.done} configs"


def _where(result: Any) -> str:
    """``on NVIDIA H200`` for a run that ran; for a lowering-only one, what it lowered for and why: ``lowered for
    sm_90 (no GPU)``, ``lowered for sm_80 (the GPU, NVIDIA H200, is sm_90a)``."""
    device = str(result.device or "")
    if result.runnable and device:
        return f"on {device}"
    arch = getattr(result.choice, "arch", None)
    because = why_lowered(result.choice)
    return f"lowered for {arch} ({because})" if arch else f"lowered only ({because})"


def _gpu(state: dict) -> str:
    """``1980 MHz, 41 °C, 350 W``: what is known of the GPU's state."""
    units = (("sm_clock_mhz", "MHz"), ("temperature_c", "°C"), ("power_w", "W"))
    return ", ".join(f"{state[name]:.0f} {unit}" for name, unit in units if state.get(name) is not None) or "unknown"


def rows_and_pivot(
    result: Any, index: str | None, columns: str | None, sort: dict[str, Any] | None, row_filter: str | None
) -> dict[str, Any]:
    """``rows`` (:func:`rows_data`) and ``pivot`` (:func:`pivot_data`) under one filter, worked out once."""
    selection = select_rows(result, row_filter)
    return {"rows": rows_table(selection, ROW_LIMIT, sort), "pivot": _pivot(result, index, columns, selection)}


# -- the heat map ----------------------------------------------------------------------------------------------
def pivot_data(
    result: Any, index: str | None = None, columns: str | None = None, row_filter: str | None = None
) -> dict[str, Any] | None:
    """Latency (ms) over two swept parameters as a heat map; None when there is nothing to plot.

    Labels as text; each row's ``values`` (None: missing) and ``cells``: the
    value's ``text``, ``background`` (fastest bright), text ``colour`` and
    whether it is the ``best`` (outlined in ``mark``); a missing cell is None.
    ``filters``: for each cell, the rows' filter that keeps its configs (the live
    view's cells type it when clicked), None where none can be typed.
    ``row_filter``: the rows' filter (:func:`rows_data`); the map then shows the rows it keeps, on the same grid.
    """
    typed = row_filter is not None and row_filter.strip()
    return _pivot(result, index, columns, select_rows(result, row_filter) if typed else None)


def _pivot(result: Any, index: str | None, columns: str | None, selection: Selection | None) -> dict[str, Any] | None:
    if len(result.swept) < 2 or not result.runnable:
        return None
    # The rows the filter keeps; None when it keeps them all (none typed, or unreadable: the rows' table says why).
    kept = selection.frame.loc[selection.kept.index] if selection is not None and selection.applied is not None else None
    table = result.pivot_table(index, columns, frame=kept)
    if table.isna().all().all() and kept is None:
        return None
    values = [[None if math.isnan(v) else float(v) for v in line] for line in table.to_numpy(dtype=float)]
    finite = [value for line in values for value in line if value is not None]
    low, high = (min(finite), max(finite)) if finite else (0.0, 0.0)
    places = decimals(finite)
    index_name, columns_name = str(table.index.name), str(table.columns.name)
    cells = [[_heat_cell(value, low, high, places) for value in line] for line in values]
    over = " over the rows that match the filter" if kept is not None else ""
    caption = f"latency (ms) of {result.kernel_name}{over}: fastest bright, minimum outlined"
    if not finite:
        caption = f"latency (ms) of {result.kernel_name}: no row that matches the filter has one"
    chosen = result.chosen_cell(table)
    if chosen and (cell := cells[table.index.get_loc(chosen[0])][table.columns.get_loc(chosen[1])]) and not cell["best"]:
        cell["text"] += " ★"
        caption += "; ★ the best config, chosen by the re-benchmark at the end"
    return {
        "kernel": result.kernel_name,
        "caption": caption,
        "corner": f"{index_name} \\ {columns_name}",
        "index_name": index_name,
        "columns_name": columns_name,
        "columns": [str(c) for c in table.columns],
        "mark": BEST_MARK,
        "rows": [
            {
                "label": str(label),
                "values": line,
                "cells": line_cells,
                "filters": [filter_for({table.index.name: label, table.columns.name: c}) for c in table.columns],
            }
            for label, line, line_cells in zip(table.index, values, cells, strict=True)
        ],
    }


def _heat_cell(value: float | None, low: float, high: float, places: int) -> dict[str, Any] | None:
    if value is None:
        return None
    background, colour = heat_colour((value - low) / (high - low) if high > low else 0.0)
    return {"text": f"{value:.{places}f}", "background": background, "colour": colour, "best": value == low}

