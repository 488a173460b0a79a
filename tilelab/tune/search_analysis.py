"""How a search went, as data: the best latency so far after each benchmark, and which parameters mattered.

Both read a :class:`~tilelab.tune.result.TuneResult` (a search or a grid) and
know nothing of screens; the tuning view (:mod:`tilelab.views.tuning`) draws
what they return.
"""

from __future__ import annotations

import importlib.util
import math
import warnings
from typing import Any

from tilelab.tune.row import TuneStatus
from tilelab.tune.search import study_of
from tilelab.tune.space import config_key

__all__ = ["MAIN_EFFECTS_SO_FAR", "best_so_far", "parameter_importance"]

MAIN_EFFECTS_SO_FAR = "main effects so far"


def best_so_far(result: Any):
    """One row per benchmark of this run, in the order they finished, as a pandas DataFrame.

    Columns: ``benchmark`` (1, 2, ...), ``elapsed_s`` (from the start of the run),
    ``trial``, ``chosen_by``, ``status`` (``ok`` or ``pruned``: an early stop is a
    benchmark too), ``latency_ms`` and ``best_ms`` (the fastest ``ok`` latency so far),
    ``config``. Rows restored from the history are not benchmarks of this run and are left out.
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


def parameter_importance(result: Any, final: bool = True) -> tuple[dict[str, float], str]:
    """Each swept parameter's share of the latency's variance, and the method that measured it.

    ``"fANOVA"``: Optuna's fANOVA (on the run's study, or one rebuilt from a
    grid's rows), when scikit-learn is installed. ``"main effects"`` without it:
    the first-order terms of the same functional ANOVA computed directly on the
    rows, i.e. the variance of log latency between each parameter's values (exact
    for a full grid; an estimate for a search's uneven sample). ``final`` False
    (a search still running) always takes main effects, as ``"main effects so
    far"``: they cost milliseconds where fANOVA fits a forest, and they are
    redrawn as rows arrive. Shares add up to 1. ``({}, why)`` when there is too
    little to say.
    """
    timed = [row for row in result.rows.values() if row.ok and row.latency_ms]
    if len(timed) < 3:
        return {}, "needs at least 3 timed configs"
    if not final:
        return _main_effects(timed, result.swept), MAIN_EFFECTS_SO_FAR
    if importlib.util.find_spec("sklearn") is None:
        return _main_effects(timed, result.swept), "main effects"
    import optuna

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna warns about small studies; the bars say what there is
        try:
            evaluator = optuna.importance.FanovaImportanceEvaluator(seed=0)
            found = optuna.importance.get_param_importances(study_of(result), evaluator=evaluator)
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
