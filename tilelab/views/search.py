"""How a search went: best-so-far latency against benchmarks and wall time, and which parameters mattered.

Data shaping and a script-free SVG rendering live together here:
:func:`best_so_far` and :func:`parameter_importance` shape a
:class:`~tilelab.tune.result.TuneResult` (a search or a grid) into tables;
:func:`best_so_far_svg`, :func:`importance_svg` and :func:`search_html` draw
them as inline SVG whose colours and fonts are JupyterLab's CSS variables (with
light fallbacks outside JupyterLab), so light and dark themes both work. Every
user-derived string (parameter names, values, kernel names) is escaped.
"""

from __future__ import annotations

import html
import importlib.util
import math
import warnings
from typing import Any

from tilelab.tune.result import TuneStatus
from tilelab.tune.search import study_of
from tilelab.tune.space import config_key

__all__ = ["best_so_far", "best_so_far_svg", "importance_svg", "parameter_importance", "search_html"]

_FONT = "var(--jp-ui-font-family, system-ui, -apple-system, sans-serif)"
_TEXT = "var(--jp-ui-font-color1, #1f2328)"
_MUTED = "var(--jp-ui-font-color2, #57606a)"
_GRID = "var(--jp-border-color2, #d0d7de)"
_LINE = "var(--jp-brand-color1, #0969da)"
_DOT = "var(--jp-content-font-color3, #8c959f)"
_PRUNED = "var(--jp-warn-color1, #bf8700)"
_REFERENCE = "var(--jp-error-color1, #cf222e)"
_BAR = "var(--jp-brand-color2, #54aeff)"
_WIDTH, _HEIGHT = 420, 240
_PAD = {"left": 62, "right": 14, "top": 28, "bottom": 42}


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


# -- data ---------------------------------------------------------------------------------------------------
def best_so_far(result: Any):
    """One row per benchmark of this run, in the order they finished.

    Columns: ``benchmark`` (1, 2, ...), ``elapsed_s`` (from the start of the run),
    ``trial``, ``chosen_by``, ``status`` (``ok`` or ``pruned``: an early stop is a
    benchmark too), ``latency_ms`` and ``best_ms`` (the fastest ``ok`` latency so far).
    Rows restored from the history are not benchmarks of this run and are left out.
    """
    import pandas as pd


    timed = [
        row for row in result.rows.values()
        if not row.cached and row.latency_ms is not None and row.status in (TuneStatus.OK, TuneStatus.PRUNED)
    ]  # fmt: skip
    timed.sort(key=lambda row: (row.elapsed_s if row.elapsed_s is not None else math.inf, row.trial or 0))
    best, records = math.inf, []
    for number, row in enumerate(timed, start=1):
        if row.ok:
            best = min(best, row.latency_ms)
        records.append(
            {
                "benchmark": number, "elapsed_s": row.elapsed_s, "trial": row.trial, "chosen_by": row.chosen_by,
                "status": row.status.value, "latency_ms": row.latency_ms, "best_ms": best if best < math.inf else None,
                "config": row.label(),
            }
        )  # fmt: skip
    columns = ["benchmark", "elapsed_s", "trial", "chosen_by", "status", "latency_ms", "best_ms", "config"]
    frame = pd.DataFrame.from_records(records, columns=columns)
    for name in ("elapsed_s", "latency_ms", "best_ms"):
        frame[name] = frame[name].astype("float64")
    return frame


def parameter_importance(result: Any) -> tuple[dict[str, float], str]:
    """Each swept parameter's share of the latency's variance, and the method that measured it.

    ``"fANOVA"``: Optuna's fANOVA (on the run's study, or one rebuilt from a
    grid's rows), when scikit-learn is installed. ``"main effects"`` without it:
    the first-order terms of the same functional ANOVA computed directly on the
    rows, i.e. the variance of log latency between each parameter's values (exact
    for a full grid; an estimate for a search's uneven sample). Shares add up to
    1. ``({}, why)`` when there is too little to say.
    """
    timed = [row for row in result.rows.values() if row.ok and row.latency_ms]
    if len(timed) < 3:
        return {}, "needs at least 3 timed configs"
    if importlib.util.find_spec("sklearn") is None:
        return _main_effects(timed, result.swept), "main effects"
    import optuna


    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna warns about small studies; the bars say what there is
        try:
            found = optuna.importance.get_param_importances(study_of(result), evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0))
        except (ValueError, RuntimeError) as exc:
            return {}, f"fANOVA could not run: {exc}"
    return {name: float(value) for name, value in found.items()}, "fANOVA"


def _main_effects(rows: list[Any], swept: tuple[str, ...]) -> dict[str, float]:
    """Per parameter, the variance of log latency between its values' means, as a share of the sum over parameters."""

    logs = [math.log(row.latency_ms) for row in rows]
    mean = sum(logs) / len(logs)
    between = {}
    for name in swept:
        groups: dict[str, list[float]] = {}
        for row, value in zip(rows, logs, strict=True):
            groups.setdefault(config_key({"v": row.config.get(name)}), []).append(value)
        between[name] = sum(len(g) * (sum(g) / len(g) - mean) ** 2 for g in groups.values()) / len(logs)
    total = sum(between.values())
    if total <= 0:
        return dict.fromkeys(swept, 0.0)
    return dict(sorted(((name, value / total) for name, value in between.items()), key=lambda item: -item[1]))


# -- drawing -------------------------------------------------------------------------------------------------
def _ticks(low: float, high: float, log: bool, count: int = 4) -> list[float]:
    if log:
        return [math.exp(math.log(low) + (math.log(high) - math.log(low)) * i / count) for i in range(count + 1)]
    return [low + (high - low) * i / count for i in range(count + 1)]


def _number(value: float) -> str:
    return f"{value:.3g}"


def _frame(title: str, x_label: str, y_label: str, body: list[str]) -> str:
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{_WIDTH}' height='{_HEIGHT}' viewBox='0 0 {_WIDTH} {_HEIGHT}'"
        f" role='img' aria-label='{_esc(title)}' style='font-family:{_FONT};font-size:11px'>"
        f"<text x='{_PAD['left']}' y='16' style='fill:{_TEXT};font-weight:600'>{_esc(title)}</text>"
        f"<text x='{(_WIDTH + _PAD['left']) / 2:.0f}' y='{_HEIGHT - 6}' text-anchor='middle' style='fill:{_MUTED}'>{_esc(x_label)}</text>"
        f"<text transform='translate(12 {(_HEIGHT + _PAD['top']) / 2:.0f}) rotate(-90)' text-anchor='middle' style='fill:{_MUTED}'>{_esc(y_label)}</text>"
        + "".join(body) + "</svg>"
    )  # fmt: skip


def _line_chart(points: list[tuple[float, float, str]], steps: list[tuple[float, float]], title: str, x_label: str, reference: float | None) -> str:
    """Dots (x, latency, status) and a best-so-far step line, y on a log scale when latencies spread wide."""
    if not points:
        return _frame(title, x_label, "latency (ms)", [f"<text x='{_PAD['left']}' y='60' style='fill:{_MUTED}'>no benchmarks yet</text>"])
    ys = [y for _, y, _ in points] + ([reference] if reference else [])
    low, high = min(ys), max(ys)
    log = high / low > 5
    if high == low:
        low, high = low * 0.9, high * 1.1
    xs = [x for x, _, _ in points]
    x_low, x_high = min(0.0, min(xs)), max(xs) or 1.0
    width, height = _WIDTH - _PAD["left"] - _PAD["right"], _HEIGHT - _PAD["top"] - _PAD["bottom"]

    def sx(x: float) -> float:
        return _PAD["left"] + width * (x - x_low) / max(x_high - x_low, 1e-12)

    def sy(y: float) -> float:
        share = (math.log(y) - math.log(low)) / (math.log(high) - math.log(low)) if log else (y - low) / (high - low)
        return _PAD["top"] + height * (1.0 - share)

    body = []
    for tick in _ticks(low, high, log):
        body.append(f"<line x1='{_PAD['left']}' x2='{_WIDTH - _PAD['right']}' y1='{sy(tick):.1f}' y2='{sy(tick):.1f}' style='stroke:{_GRID};stroke-width:1'/>")
        body.append(f"<text x='{_PAD['left'] - 6}' y='{sy(tick) + 4:.1f}' text-anchor='end' style='fill:{_MUTED}'>{_number(tick)}</text>")
    for tick in _ticks(x_low, x_high, False):
        body.append(f"<text x='{sx(tick):.1f}' y='{_HEIGHT - _PAD['bottom'] + 14}' text-anchor='middle' style='fill:{_MUTED}'>{_number(tick)}</text>")
    if reference:
        body.append(f"<line x1='{_PAD['left']}' x2='{_WIDTH - _PAD['right']}' y1='{sy(reference):.1f}' y2='{sy(reference):.1f}' style='stroke:{_REFERENCE};stroke-dasharray:4 3'><title>reference {_number(reference)} ms</title></line>")
    for x, y, status in points:
        colour = _PRUNED if status == "pruned" else _DOT
        body.append(f"<circle cx='{sx(x):.1f}' cy='{sy(y):.1f}' r='2.5' style='fill:{colour}'><title>{_esc(status)}: {_number(y)} ms</title></circle>")
    if steps:
        path = f"M{sx(steps[0][0]):.1f} {sy(steps[0][1]):.1f}"
        path += "".join(f" H{sx(x):.1f} V{sy(y):.1f}" for x, y in steps[1:]) + f" H{sx(x_high):.1f}"
        body.append(f"<path d='{path}' style='fill:none;stroke:{_LINE};stroke-width:2'/>")
    return _frame(title, x_label, f"latency (ms{', log' if log else ''})", body)


def best_so_far_svg(result: Any, x: str = "benchmarks", reference: float | None = None) -> str:
    """The best-so-far latency as a step line over every benchmark's latency (dots; pruned ones amber).

    ``x`` is ``"benchmarks"`` or ``"wall"`` (seconds from the start of the run);
    ``reference`` (ms), e.g. the grid's best, is drawn as a dashed line.
    """
    if x not in ("benchmarks", "wall"):
        raise ValueError(f"x={x!r}: expected 'benchmarks' or 'wall'")
    frame = best_so_far(result)
    column = "benchmark" if x == "benchmarks" else "elapsed_s"
    frame = frame.dropna(subset=[column])
    points = [(float(r[column]), float(r["latency_ms"]), r["status"]) for _, r in frame.iterrows()]
    steps, last = [], None
    for _, r in frame.iterrows():
        if r["best_ms"] == r["best_ms"] and r["best_ms"] != last:  # not NaN, and better
            steps.append((float(r[column]), float(r["best_ms"])))
            last = r["best_ms"]
    label = "benchmarks" if x == "benchmarks" else "wall time (s)"
    return _line_chart(points, steps, f"best so far vs {label}", label, reference)


def importance_svg(result: Any) -> str:
    """Parameter importance as horizontal bars, largest first."""
    found, method = parameter_importance(result)
    title = f"parameter importance ({method})" if found else "parameter importance"
    axis = "share of variance" + (" (scikit-learn gives fANOVA)" if method == "main effects" else "")
    if not found:
        return _frame(title, axis, "", [f"<text x='{_PAD['left']}' y='60' style='fill:{_MUTED}'>{_esc(method)}</text>"])
    names = sorted(found, key=found.get, reverse=True)
    label_width, bar_height = 110, 18
    width = _WIDTH - label_width - _PAD["right"] - 40
    body = []
    for i, name in enumerate(names):
        y = _PAD["top"] + 8 + i * (bar_height + 6)
        share = max(0.0, min(1.0, found[name]))
        body.append(f"<text x='{label_width - 6}' y='{y + 13}' text-anchor='end' style='fill:{_TEXT}'>{_esc(name)}</text>")
        body.append(f"<rect x='{label_width}' y='{y}' width='{max(1.0, width * share):.1f}' height='{bar_height}' style='fill:{_BAR}'><title>{_esc(name)}: {share:.3f}</title></rect>")
        body.append(f"<text x='{label_width + width * share + 4:.1f}' y='{y + 13}' style='fill:{_MUTED}'>{share:.2f}</text>")
    return _frame(title, axis, "", body)


def search_html(result: Any, reference: float | None = None) -> str:
    """The three charts and a line saying how the configs were chosen, as one script-free HTML block."""
    settings = getattr(result, "search", None)
    how = settings.describe() if settings is not None else "grid"
    done = sum(1 for row in result.rows.values() if not row.cached)
    line = f"<b>{_esc(result.kernel_name)}</b>: {_esc(how)}; {done} configs measured of {len(result.configs)} in the space"
    charts = [best_so_far_svg(result, "benchmarks", reference), best_so_far_svg(result, "wall", reference), importance_svg(result)]
    figures = "".join(f"<div style='flex:0 0 auto'>{chart}</div>" for chart in charts)
    return (
        f"<div class='tilelab-search' style='font-family:{_FONT};color:{_TEXT}'>"
        f"<div style='margin:4px 0'>{line}</div><div style='display:flex;flex-wrap:wrap;gap:12px'>{figures}</div></div>"
    )
