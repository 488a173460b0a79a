"""How a sweep picks its configs: ``tune()``'s ``search``, ``budget``, ``seed``, ``sampler`` and ``prune`` checked and settled.

``"auto"`` becomes the grid or an Optuna search here (:data:`AUTO_THRESHOLD`);
:mod:`tilelab.tune.search` then feeds the configs the settings ask for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Any

SEARCHES = ("grid", "optuna", "auto")
SAMPLERS = ("tpe", "gp", "random")
# "auto" searches spaces of more than AUTO_THRESHOLD configs (30 % of them) and runs the grid on
# the rest. Measured on tests/search_objectives.py's GEMM-like spaces (20 seeds, 2 workers; median
# share of the space tried before a config within 2 % of the grid's best, for random / TPE / GP):
# 16 configs 0.44 / 0.53 / 0.31; 36: 0.35 / 0.47 / 0.64; 48: 0.49 / 0.30 / 0.27; 64: 0.47 / 0.39 /
# 0.38; 128: 0.25 / 0.16 / 0.18; 256: 0.13 / 0.08 / 0.04. Up to 36 configs no sampler beats the
# grid's own order; from 48 on both do. On an H200 (bench/results/search.json), with the static prior
# choosing the first batch of CUDA studies (tilelab/tune/prior.py), a 30 % search of the 36-, 16- and
# 216-config spaces reached the grid's best ±2 % after a median 6 %, 17 % and 9 % of the grid's benchmarks;
# without the prior the two small spaces got there in 1 of 5 seeds. "auto" still runs the grid up to 40
# configs: its threshold comes from the CPU replays above, where no prior applies.
AUTO_THRESHOLD = 40
AUTO_FRACTION = 0.3


@dataclass(frozen=True)
class SearchSettings:
    """How a sweep picks its configs (``tune(search=..., budget=..., seed=..., sampler=...)`` resolved)."""

    kind: str  # "grid" or "optuna"
    requested: str  # what was asked for: "grid", "optuna" or "auto"
    budget: int | None  # configs this run may measure; None: all
    seed: int | None
    sampler: str  # "grid", "tpe", "gp", "random" or a sampler's class name
    prune: bool  # stop benchmarks over twice the best so far

    def describe(self) -> str:
        """One line, e.g. ``optuna (tpe, seed 0), budget 18``."""
        seed = f", seed {self.seed}" if self.seed is not None else ""
        how = self.kind if self.kind == "grid" else f"{self.kind} ({self.sampler}{seed})"
        budget = f", budget {self.budget}" if self.budget is not None else ""
        return f"{how}{budget}{' (auto)' if self.requested == 'auto' else ''}"


def budget_count(budget: Any, size: int) -> int | None:
    """``budget`` as a number of configs: an int, or a fraction (0, 1] of ``size``; None for all.

    Raises
    ------
    ValueError
        For anything else, naming the value.
    """
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, Real):
        raise ValueError(f"budget={budget!r}: expected a number of configs (int) or a fraction of the space (0 < f <= 1)")
    if isinstance(budget, int) or (float(budget).is_integer() and budget > 1):
        if budget < 1:
            raise ValueError(f"budget={budget!r}: expected at least 1 config")
        return int(budget)
    if not 0 < budget <= 1:
        raise ValueError(f"budget={budget!r}: a fraction of the space must be in (0, 1]")
    return max(1, math.ceil(budget * size))


def resolve_search(
    search: str, budget: Any, seed: Any, sampler: Any, prune: bool | None, size: int, runnable: bool
) -> SearchSettings:
    """Check ``tune()``'s search options and settle ``"auto"``.

    Raises
    ------
    ValueError
        With one line naming the bad option.
    """
    if search not in SEARCHES:
        raise ValueError(f"search={search!r}: expected one of {', '.join(map(repr, SEARCHES))}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"seed={seed!r}: expected an int")
    if prune is not None and not isinstance(prune, bool):
        raise ValueError(f"prune={prune!r}: expected True or False")
    count = budget_count(budget, size)
    sampler_name = _sampler_name(sampler)
    kind = search
    if search == "auto":
        kind = "optuna" if runnable and size > AUTO_THRESHOLD and (count is None or count < size) else "grid"
        if kind == "optuna":
            count = count or max(1, math.ceil(AUTO_FRACTION * size))
    if kind == "optuna" and not runnable:
        raise ValueError("search='optuna' needs timings, but this target only lowers its configs: use search='grid'")
    if kind == "grid" and sampler is not None and search != "auto":
        raise ValueError(f"sampler={sampler!r} needs search='optuna' (or 'auto')")
    name = "grid" if kind == "grid" else sampler_name
    return SearchSettings(kind, search, count, seed, name, kind == "optuna" if prune is None else prune)


def _sampler_name(sampler: Any) -> str:
    if sampler is None:
        return "tpe"
    if isinstance(sampler, str):
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler={sampler!r}: expected one of {', '.join(map(repr, SAMPLERS))} or an Optuna sampler")
        return sampler
    if type(sampler).__module__.startswith("optuna") and hasattr(sampler, "sample_relative"):
        return type(sampler).__name__
    raise ValueError(f"sampler={sampler!r}: expected one of {', '.join(map(repr, SAMPLERS))} or an Optuna sampler")
