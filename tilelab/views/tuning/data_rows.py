"""The Tuning tab's ``rows`` (:func:`rows_data`): a sweep's rows as a table of text, in the order the user clicked, of
those the filter they typed keeps (:mod:`~tilelab.views.tuning.row_filter`); part of
:func:`~tilelab.views.tuning.data.tuning_data`, whose heat map follows the same filter (:func:`select_rows`)."""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from typing import Any

from tilelab.provenance import PROVENANCE_COLUMNS
from tilelab.tune.row import RESOURCE_COLUMNS, SPREAD_COLUMNS, TRUST_COLUMNS
from tilelab.views.tuning.colours import STATUS_COLOURS
from tilelab.views.tuning.row_filter import FilterError, parse_filter, term_for

__all__ = ["ROW_LIMIT", "Selection", "decimals", "rows_data", "rows_table", "select_rows"]

ROW_LIMIT = 200


def rows_data(
    result: Any, limit: int = ROW_LIMIT, sort: dict[str, Any] | None = None, row_filter: str | None = None
) -> dict[str, Any]:
    """The rows as a table: ``columns``, their ``headers`` (the sorted one with its arrow), ``numeric``
    (right-aligned), ``cells`` as text and their ``colours``.

    Without ``sort``, the latest ``limit`` rows in the space's order; with ``{"column": name, "descending": bool}``,
    every row ordered by that column (numbers by value, text after them, missing values last, ties in the space's
    order; ★ before ≈ in ``best``) and the first ``limit`` of them, so the fastest configs of a large sweep are a
    click away. ``row_filter``: the filter the user typed (:mod:`~tilelab.views.tuning.row_filter`), which rows count at
    all; ``filter`` is it as applied (None: none), ``filter_error`` why it could not be (every row then counts) and
    ``matched`` how many rows it kept; ``example`` is a filter of this sweep's own columns and values that keeps some
    of its rows (the filter box's placeholder). ``sort`` says which order the table is in (None: the space's) and
    ``of`` how many rows there are (``note`` says when not all are shown). A column no row has a value in is left out; the
    swept parameters come first, then the figures scanned first (:data:`_FIRST_COLUMNS`), the timing's details and
    the bookkeeping after them, ``error`` last; a column's floats share one number of decimals (:func:`decimals`),
    missing values are empty; only a status has a colour (None: the text's).
    """
    return rows_table(select_rows(result, row_filter), limit, sort)


@dataclass(frozen=True)
class Selection:
    """A result's rows and what the rows' filter keeps of them (:func:`_filtered`)."""

    frame: Any  # to_pandas()
    columns: list[Any]  # the table's, in the order shown
    kept: Any  # the rows shown that the filter keeps
    applied: str | None
    problem: str | None
    example: str  # a filter of this sweep's own columns and values, for the box's placeholder


def select_rows(result: Any, row_filter: str | None) -> Selection | None:
    """The rows and what ``row_filter`` keeps of them; None when there are no rows yet."""
    frame = result.to_pandas()
    if frame.empty:
        return None
    shown, columns = _shown(result, frame)
    return Selection(frame, columns, *_filtered(shown, columns, row_filter), _example(shown, result.swept))


def rows_table(selection: Selection | None, limit: int, sort: dict[str, Any] | None) -> dict[str, Any]:
    """The table :func:`rows_data` describes, of the rows ``selection`` keeps (None: no rows yet)."""
    if selection is None:
        return {
            "columns": [], "headers": [], "numeric": [], "cells": [], "colours": [], "sort": None, "of": 0,
            "matched": 0, "note": None, "filter": None, "filter_error": None, "example": "status!=ok",
        }  # fmt: skip
    frame, columns, kept = selection.frame, selection.columns, selection.kept
    order = _sort_of(sort, columns)
    if order is None:
        shown = kept.tail(limit)
    else:
        column = next(c for c in columns if str(c) == order["column"])
        keys = kept[column].map(_MARK_ORDER.get) if column == "best" else kept[column]
        shown = kept.iloc[_sorted_positions(list(keys), order["descending"])[:limit]]
    lines = [[_plain(value) for value in values] for values in shown[columns].itertuples(index=False)]
    places = [decimals(line[position] for line in lines) for position in range(len(columns))]
    return {
        "columns": [str(c) for c in columns],
        "headers": [f"{c} {order['arrow']}" if order and str(c) == order["column"] else str(c) for c in columns],
        "numeric": [bool(shown[c].map(_numeric).any()) for c in columns],
        "cells": [[_text(value, places[position]) for position, value in enumerate(line)] for line in lines],
        "colours": [[STATUS_COLOURS.get(str(value)) if c == "status" else None for c, value in zip(columns, line, strict=True)] for line in lines],
        "sort": order,
        "of": len(frame),
        "matched": len(kept),
        "note": _rows_note(len(shown), len(kept), len(frame), order, selection.applied is not None),
        "filter": selection.applied,
        "filter_error": selection.problem,
        "example": selection.example,
    }


# What a kernel engineer scans first, after the config: the time, the re-benchmark's, throughput, how near the
# roofline, registers and spills; then how each config was timed, then the sweep's bookkeeping, and an error last
# (a long line: it would push the timings out of a narrow notebook). A column named in neither list sits between.
_FIRST_COLUMNS = ("status", "latency_ms", "rebench_ms", "tflops", "gbps", "roofline_pct", *RESOURCE_COLUMNS, "roofline_ms")
_LATER_COLUMNS = (*SPREAD_COLUMNS, "repetitions", *TRUST_COLUMNS, "compile_s", "bench_s", "trial", "chosen_by", "elapsed_s",
                  "cached", "cache", "error")  # fmt: skip


def _column_rank(column: Any, swept: tuple[str, ...]) -> tuple[int, int]:
    if column == "best":
        return (0, 0)
    if column in swept:
        return (1, swept.index(column))
    if column in _FIRST_COLUMNS:
        return (2, _FIRST_COLUMNS.index(column))
    if column in _LATER_COLUMNS:
        return (4, _LATER_COLUMNS.index(column))
    return (3, 0)


def _shown(result: Any, frame: Any) -> tuple[Any, list[Any]]:
    """The rows' table as shown (``frame``, :meth:`to_pandas`, less what is for it alone, with the ``best`` marks)
    and its columns in the order shown."""
    # The key's hashes and TileLang's entry are for to_pandas() and why(); the table shows who served each compile.
    shown = frame.drop(columns=["device", *PROVENANCE_COLUMNS[1:]]).astype(object)
    shown = shown.where(shown.notna(), None)  # pandas' NA and NaN become None: one "missing" for every column
    marks = _marks(result)
    shown.insert(0, "best", [marks.get(row.index, "") for row in result.ordered_rows()])
    present = [c for c in shown.columns if c in result.swept or shown[c].map(_present).any()]
    return shown, sorted(present, key=lambda c: _column_rank(c, result.swept))


def _filtered(shown: Any, columns: list[Any], text: str | None) -> tuple[Any, str | None, str | None]:
    """The rows of ``shown`` that ``text`` keeps, the filter as applied and why it could not be (then every row)."""
    names = [str(c) for c in shown.columns]
    try:
        keep = parse_filter(text, names, shown=[str(c) for c in columns])
    except FilterError as error:
        return shown, None, str(error)
    if keep is None:
        return shown, None, None
    rows = ({name: _plain(value) for name, value in zip(names, values, strict=True)} for values in shown.itertuples(index=False))
    return shown[[keep.matches(row) for row in rows]], keep.text, None


_BARE = re.compile(r"[^\s\"'|\\]+")  # a value typed without quotes


def _example(shown: Any, swept: tuple[str, ...]) -> str:
    """A filter that keeps some of this sweep's rows, from its own columns and values: ``block=128|16
    latency_ms<1.2`` (the first swept parameter's two values of the fastest rows, and the faster half), or, without
    timings, ``status!=ok stages=2|3``."""
    latency = [_plain(v) for v in shown.get("latency_ms", [None] * len(shown))]
    timed = sorted((i for i, v in enumerate(latency) if _numeric(v) and math.isfinite(v)), key=lambda i: latency[i])
    terms = [] if timed else ["status!=ok"]
    for name in swept:
        column = [str(_plain(v)) for v in shown[name]]
        texts = [column[i] for i in timed] if timed else column
        values = [text for text in dict.fromkeys(texts) if _BARE.fullmatch(text)]
        term = term_for(name, values[:2]) if len(values) >= 2 else None
        if term is not None:  # None: a name that cannot be typed (an = in it)
            terms.append(term)
            break
    if timed:
        terms.append(f"latency_ms<{_just_above(latency[timed[len(timed) // 2]])}")
    return " ".join(terms)


def _just_above(value: float) -> str:
    """The number of two significant digits just above ``value``: 1.125 gives ``1.2``, 0.0696 ``0.07``, 0.5 ``0.51``."""
    if value <= 0:
        return "0"
    places = 1 - math.floor(math.log10(value))
    above = (math.floor(value * 10**places) + 1) / 10**places
    text = f"{above:.{max(places, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _sort_of(sort: Any, columns: list[Any]) -> dict[str, Any] | None:
    """``sort`` when it names a column the table shows, as ``{"column", "descending", "arrow"}`` (the header's ▲ or
    ▼); else None (the space's order)."""
    if not isinstance(sort, dict) or sort.get("column") not in [str(c) for c in columns]:
        return None
    descending = bool(sort.get("descending", False))
    return {"column": str(sort["column"]), "descending": descending, "arrow": "▼" if descending else "▲"}


_MARK_ORDER = {"★": 0, "≈": 1}  # the best first, then its ties


def _sorted_positions(values: list[Any], descending: bool) -> list[int]:
    """Positions of ``values`` in order (reversed when ``descending``), missing values last, ties as they came."""
    missing = {i for i, value in enumerate(values) if _plain(value) in (None, "")}
    present = [i for i in range(len(values)) if i not in missing]
    present.sort(key=lambda i: _order_key(values[i]), reverse=descending)
    return present + sorted(missing)


def _order_key(value: Any) -> tuple[int, float, str]:
    plain = _plain(value)
    return (0, float(plain), "") if _numeric(plain) or isinstance(plain, bool) else (1, 0.0, str(plain))


def _rows_note(shown: int, matched: int, of: int, order: dict[str, Any] | None, filtered: bool) -> str | None:
    """``the latest 200 of 726 rows``; filtered: ``12 of 726 rows match``, with ``the first 200 by latency_ms`` where
    more than ``shown`` do."""
    if not filtered:
        if shown == of:
            return None
        return f"the latest {shown} of {of} rows" if order is None else f"the first {shown} of {of} rows by {order['column']}"
    match = f"{matched} of {of} rows match" if matched != 1 else f"1 of {of} rows matches"
    if shown == matched:
        return match
    return f"{match}; the latest {shown} shown" if order is None else f"{match}; the first {shown} by {order['column']} shown"


def _marks(result: Any) -> dict[int, str]:
    """After a re-benchmark with a verdict: ★ for the best row, ≈ for the rows it could not tell from the best."""
    best = result.rebenchmarked_best
    if best is None:
        return {}
    return {**dict.fromkeys(result.tied(), "≈"), best.index: "★"}


def _numeric(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


def _present(value: Any) -> bool:
    plain = _plain(value)
    return plain is not None and plain != "" and plain is not False


def decimals(values: Any, significant: int = 4, most: int = 6) -> int:
    """One number of decimals for ``values``, as pandas gives a column: the fewest that show each float to
    ``significant`` digits (``most`` at the most), so they line up and compare digit by digit (0.200 beside 0.265)."""
    return min(most, max((_decimals_of(v, significant) for v in values if isinstance(v, float) and math.isfinite(v)), default=0))


def _decimals_of(value: float, significant: int) -> int:
    if value == 0:
        return 0
    places = max(0, significant - 1 - math.floor(math.log10(abs(value))))
    if places == 0:
        return 0
    shown = f"{value:.{places}f}".rstrip("0")
    return len(shown) - shown.index(".") - 1


def _text(value: Any, places: int) -> str:
    """A table value as text: a float to ``places`` decimals, missing values empty."""
    if value is None:
        return ""
    return f"{value:.{places}f}" if isinstance(value, float) else str(value)


def _plain(value: Any) -> Any:
    """``value`` as a JSON value: None for missing (NaN too), numbers as int or float, anything else as its text."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return None if math.isnan(value) else float(value)
    return str(value)
