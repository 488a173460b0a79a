"""A wall-clock budget for a sweep: ``tune(..., budget="3min")``, ``--budget 3m``.

A budget is either a number of configs (an int, or a fraction of the space:
:func:`tilelab.tune.search.budget_count`) or a duration: a string of numbers
with units (``"90s"``, ``"3m"``, ``"3min"``, ``"1h30m"``, ``"500ms"``) or a
``datetime.timedelta``. A duration counts from the ``tune()`` call: no new
config starts after it (configs already compiling finish and are benchmarked,
and the top configs are still re-benchmarked), the best so far is returned and
the result says how much of the space it covered (:func:`coverage_of`).
"""

from __future__ import annotations

import datetime
import re
from typing import Any

__all__ = ["coverage_of", "duration_of", "is_duration", "looks_like_duration", "split_budget"]

_UNITS = {
    "ms": 1e-3,
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
}  # fmt: skip
_PART = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]+)", re.IGNORECASE)


def is_duration(value: Any) -> bool:
    """Whether ``value`` is meant as a duration (a string, or a ``timedelta``), not a number of configs."""
    return isinstance(value, (str, datetime.timedelta))


def looks_like_duration(text: str) -> bool:
    """Whether ``text`` (a ``%tilelang tune`` or CLI word) is written as a duration: a number, then a letter."""
    return bool(re.match(r"^\s*(\d|\.\d)[\d.]*\s*[A-Za-z]", text))


def split_budget(budget: Any) -> tuple[Any, float | None]:
    """``tune(budget=...)`` as (a budget of configs, or None; a wall-clock budget in seconds, or None)."""
    if is_duration(budget):
        return None, duration_of(budget)
    return budget, None


def duration_of(value: Any) -> float:
    """``value`` (``"3min"``, ``"90s"``, ``"1h30m"``, a ``timedelta``) in seconds.

    Raises
    ------
    ValueError
        One line naming the value and what is expected.
    """
    if isinstance(value, datetime.timedelta):
        seconds = value.total_seconds()
    else:
        text, seconds, at = str(value).strip(), 0.0, 0
        for match in _PART.finditer(text):
            unit = _UNITS.get(match.group(2).lower())
            if match.start() != at or unit is None:
                break
            seconds, at = seconds + float(match.group(1)) * unit, match.end()
        if at != len(text) or not text:
            raise ValueError(
                f"budget={value!r}: expected a number of configs, a fraction of the space, or a duration such as '90s', '3min', '1h30m'"
            )
    if not seconds > 0:
        raise ValueError(f"budget={value!r}: a wall-clock budget must be longer than zero")
    return seconds


def coverage_of(result: Any) -> str:
    """``"41 of 216 configs (19 %)"``, with what the budget did when it stopped the sweep."""
    size = max(len(result.configs), 1)
    line = f"{result.done} of {len(result.configs)} configs ({result.done / size:.0%})".replace("%", " %")
    if not result.budget_reached:
        return line
    measured = sum(1 for row in result.rows.values() if not row.cached)
    return f"budget of {_seconds(result.budget_s)} reached: no config started after it; {line}, {measured} measured in this run"


def _seconds(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value:g} s" if value < 120 else f"{value / 60:.3g} min"
