"""The ``search`` part of the Tuning tab's data: how a search went, and its charts laid out in pixels.

Best-so-far latency against benchmarks and against wall time, and each swept
parameter's importance (from :mod:`tilelab.tune.search_analysis`). Each chart
is a list of marks (``text``, ``line``, ``dot``, ``path``, ``rect``) with their
positions, colours (JupyterLab's colour variables, each with a light fallback)
and tooltips, decided here once: ``snapshot_search.py`` and
``src/widgets/tuning_search.ts`` only draw them.
"""

from __future__ import annotations

import math
from typing import Any

from tilelab.tune.search_analysis import MAIN_EFFECTS_SO_FAR, best_so_far, parameter_importance
from tilelab.views.text_width import fit

__all__ = ["analysis_data", "best_so_far_chart", "best_so_far_curve", "importance_chart", "search_data"]

_AXES = {"benchmarks": ("benchmark", "benchmarks"), "wall": ("elapsed_s", "wall time (s)")}

_TEXT = "var(--jp-ui-font-color1, #1f2328)"
_MUTED = "var(--jp-ui-font-color2, #57606a)"
_GRID = "var(--jp-border-color2, #d0d7de)"
_LINE = "var(--jp-brand-color1, #0969da)"
_DOT = "var(--jp-content-font-color3, #8c959f)"
_PRUNED = "var(--jp-warn-color1, #bf8700)"
_REFERENCE = "var(--jp-error-color1, #cf222e)"
_BAR = "var(--jp-brand-color2, #54aeff)"
_WIDTH, _HEIGHT = 420, 240
_LEFT, _RIGHT, _TOP, _BOTTOM = 62, 14, 28, 42
_LABELS, _BAR_HEIGHT = 110, 18  # the importance chart's label column and bar height


def search_data(result: Any, final: bool = True) -> dict[str, Any] | None:
    """How a search went (:func:`analysis_data`); None for a grid or before any row.

    While the search runs (``final`` False) the importance chart draws main effects so far; at its end, fANOVA
    where scikit-learn is installed (too slow to fit again on every row).
    """
    settings = getattr(result, "search", None)
    if settings is None or getattr(settings, "kind", "grid") == "grid" or not result.rows:
        return None
    return analysis_data(result, final=final)


def analysis_data(result: Any, reference: float | None = None, final: bool = True) -> dict[str, Any]:
    """:func:`search_data` for any result, a grid's too (its importance comes from its rows).

    ``reference`` (ms), e.g. the grid's best, is drawn as a dashed line; ``final`` False (still running)
    measures the importance by main effects so far (:func:`~tilelab.tune.search_analysis.parameter_importance`).
    """
    settings = getattr(result, "search", None)
    found, method = parameter_importance(result, final)
    benchmarks = best_so_far(result)
    curves = [_curve(benchmarks, "benchmarks"), _curve(benchmarks, "wall")]
    shares = {"shares": [[str(name), float(share)] for name, share in found.items()], "method": method}
    reference = None if reference is None else float(reference)
    return {
        "kernel": result.kernel_name,
        "how": settings.describe() if settings is not None else "grid",
        "measured": sum(1 for row in result.rows.values() if not row.cached),
        "space": len(result.configs),
        "reference": reference,
        "curves": curves,
        "importance": shares,
        "charts": [best_so_far_chart(curve, reference) for curve in curves] + [importance_chart(shares)],
    }


def best_so_far_curve(result: Any, x: str = "benchmarks") -> dict[str, Any]:
    """Every benchmark's latency (``points``: x, ms, status) and the best-so-far steps, against ``x``.

    ``x`` is ``"benchmarks"`` or ``"wall"`` (seconds from the start of the run).
    """
    if x not in _AXES:
        raise ValueError(f"x={x!r}: expected 'benchmarks' or 'wall'")
    return _curve(best_so_far(result), x)


def _curve(benchmarks: Any, x: str) -> dict[str, Any]:
    """:func:`best_so_far_curve` from ``benchmarks``, :func:`~tilelab.tune.search_analysis.best_so_far`'s frame."""
    column, label = _AXES[x]
    frame = benchmarks.dropna(subset=[column])
    points = [[float(r[column]), float(r["latency_ms"]), str(r["status"])] for _, r in frame.iterrows()]
    steps, last = [], None
    for _, r in frame.iterrows():
        if r["best_ms"] == r["best_ms"] and r["best_ms"] != last:  # not NaN, and better
            steps.append([float(r[column]), float(r["best_ms"])])
            last = r["best_ms"]
    return {"axis": x, "label": label, "points": points, "steps": steps}


# -- the charts: marks in pixels ---------------------------------------------------------------------------
def _text(x: float, y: float, text: str, colour: str = _MUTED, anchor: str = "start", *, bold: bool = False,
          rotate: int = 0) -> dict[str, Any]:  # fmt: skip
    return {"mark": "text", "x": round(x, 1), "y": round(y, 1), "text": text, "colour": colour, "anchor": anchor,
            "bold": bold, "rotate": rotate}  # fmt: skip


def _chart(title: str, x_label: str, y_label: str, marks: list[dict[str, Any]], height: int = _HEIGHT) -> dict[str, Any]:
    """A chart of ``marks`` under its title, with its axes' labels (the y label turned to read upwards)."""
    frame = [
        _text(_LEFT, 16, title, _TEXT, bold=True),
        _text((_WIDTH + _LEFT) / 2, height - 6, x_label, anchor="middle"),
        _text(12, (height + _TOP) / 2, y_label, anchor="middle", rotate=-90),
    ]
    return {"title": title, "width": _WIDTH, "height": height, "marks": frame + marks}


def _ticks(low: float, high: float, log: bool, count: int = 4) -> list[float]:
    if log:
        return [math.exp(math.log(low) + (math.log(high) - math.log(low)) * i / count) for i in range(count + 1)]
    return [low + (high - low) * i / count for i in range(count + 1)]


def _round_ticks(span: float, whole: bool) -> list[float]:
    """Ticks over [0, span] at a round step (1, 2 or 5 times a power of ten), at most 6 of them; ``whole``: counts,
    so the step is at least 1."""
    step = 10 ** math.floor(math.log10(span / 5)) if span > 0 else 1.0
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= 5:
            step *= factor
            break
    step = max(step, 1.0) if whole else step
    return [round(i * step, 12) for i in range(int(span / step + 1e-9) + 1)]


def _number(value: float) -> str:
    return f"{value:.3g}"


def best_so_far_chart(curve: dict[str, Any], reference: float | None = None) -> dict[str, Any]:
    """A :func:`best_so_far_curve` as a chart: a dot per benchmark (pruned ones amber) and the best-so-far step line.

    The y axis is logarithmic when latencies spread wide; ``reference`` (ms) is a dashed line.
    """
    points, steps = curve["points"], curve["steps"]
    title, x_label = f"best so far vs {curve['label']}", curve["label"]
    if not points:
        return _chart(title, x_label, "latency (ms)", [_text(_LEFT, 60, "no benchmarks yet")])
    ys = [y for _, y, _ in points] + ([reference] if reference else [])
    low, high = min(ys), max(ys)
    log = high / low > 5
    if high == low:
        low, high = low * 0.9, high * 1.1
    xs = [x for x, _, _ in points]
    x_low, x_high = min(0.0, min(xs)), max(xs) or 1.0
    width, height = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM

    def sx(x: float) -> float:
        return _LEFT + width * (x - x_low) / max(x_high - x_low, 1e-12)

    def sy(y: float) -> float:
        share = (math.log(y) - math.log(low)) / (math.log(high) - math.log(low)) if log else (y - low) / (high - low)
        return _TOP + height * (1.0 - share)

    marks = []
    for tick in _ticks(low, high, log):
        marks.append(_line(_LEFT, sy(tick), _WIDTH - _RIGHT, sy(tick), _GRID))
        marks.append(_text(_LEFT - 6, sy(tick) + 4, _number(tick), anchor="end"))
    x_ticks = _round_ticks(x_high - x_low, whole=curve["axis"] == "benchmarks")
    marks += [_text(sx(x_low + tick), _HEIGHT - _BOTTOM + 14, _number(x_low + tick), anchor="middle") for tick in x_ticks]
    if reference:
        level, tip = sy(reference), f"reference {_number(reference)} ms"
        marks.append(_line(_LEFT, level, _WIDTH - _RIGHT, level, _REFERENCE, "4 3", tip, [_LEFT, level - 3, width, 6]))
    for x, y, status in points:
        box = [sx(x) - 4, sy(y) - 4, 8, 8]
        dot = {"mark": "dot", "x": round(sx(x), 1), "y": round(sy(y), 1), "r": 2.5, "colour": _PRUNED if status == "pruned" else _DOT}
        marks.append({**dot, "tip": f"{status}: {_number(y)} ms", "box": [round(v, 1) for v in box]})
    if steps:
        path = f"M{sx(steps[0][0]):.1f} {sy(steps[0][1]):.1f}"
        path += "".join(f" H{sx(x):.1f} V{sy(y):.1f}" for x, y in steps[1:]) + f" H{sx(x_high):.1f}"
        marks.append({"mark": "path", "d": path, "colour": _LINE, "width": 2})
    return _chart(title, x_label, f"latency (ms{', log' if log else ''})", marks)


def _line(x1: float, y1: float, x2: float, y2: float, colour: str, dash: str | None = None,
          tip: str | None = None, box: list[float] | None = None) -> dict[str, Any]:  # fmt: skip
    line = {"mark": "line", "x1": round(x1, 1), "y1": round(y1, 1), "x2": round(x2, 1), "y2": round(y2, 1), "colour": colour, "dash": dash}
    return {**line, "tip": tip, "box": None if box is None else [round(v, 1) for v in box]}


def importance_chart(importance: dict[str, Any]) -> dict[str, Any]:
    """Parameter importance (``shares``: [name, share] pairs, and the ``method``) as horizontal bars, largest first,
    in a chart as tall as they need; without shares, the method's words say why there are none."""
    shares, method = importance["shares"], importance["method"]
    title = f"parameter importance ({method})" if shares else "parameter importance"
    notes = {"main effects": " (scikit-learn gives fANOVA)", MAIN_EFFECTS_SO_FAR: ", redrawn as configs finish"}
    axis = "share of variance" + notes.get(method, "")
    if not shares:
        return _chart(title, axis, "", [_text(_LEFT, 60, method)], height=100)
    width = _WIDTH - _LABELS - _RIGHT - 40
    marks = []
    for i, (name, value) in enumerate(sorted(shares, key=lambda pair: pair[1], reverse=True)):
        y = _TOP + 8 + i * (_BAR_HEIGHT + 6)
        share = max(0.0, min(1.0, value))
        length = round(max(1.0, width * share), 1)
        marks.append(_text(_LABELS - 6, y + 13, fit(name, _LABELS - 10), _TEXT, anchor="end"))
        tip = f"{name}: {share:.3f}"
        box = [0, y, round(_LABELS + length, 1), _BAR_HEIGHT]
        marks.append({"mark": "rect", "x": _LABELS, "y": y, "width": length, "height": _BAR_HEIGHT, "colour": _BAR, "tip": tip, "box": box})
        marks.append(_text(_LABELS + width * share + 4, y + 13, f"{share:.2f}"))
    return _chart(title, axis, "", marks, height=_TOP + 8 + len(shares) * (_BAR_HEIGHT + 6) + 24)  # as tall as its bars
