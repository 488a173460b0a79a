"""Which configs a sweep measures, and in what order: the grid, or an Optuna study.

The runner asks a *feed* for configs whenever compile workers are free and
tells it every finished row (:class:`GridFeed` for the grid, :class:`StudyFeed`
for a search). A study asks its sampler (:mod:`tilelab.tune.samplers`: TPE by
default, or a Gaussian process, or random; all seeded, all choosing among the
configs not yet tried) for configs in batches as wide as the compile workers:
on the CPU a batch is compiled and benchmarked before the next is asked for
(compiles would disturb wall-clock timings); on a GPU a new config is asked for
whenever one finishes, up to ``width`` in flight ("constant liar": pending
configs count as average, so a batch spreads out).

What the study learns from a row:
- ``ok``: its latency;
- ``pruned`` (an early-stopped benchmark): a pruned trial with the latency of its first calls;
- a failure of the config (compile error, cannot launch, timeout, mismatch, run
  error): a pruned trial with no value; TPE ranks it below every measured
  config, the GP lowers the chance that configs near it run at all;
- a crashed worker (a failure of the run, not of the config): a failed trial, which samplers ignore.

Numbers are sampled as ordered indices (64 lies between 32 and 128); other
values as categories. With a sampler object of the user's (any Optuna sampler)
a suggestion outside the space (``where=`` removed it) is told as pruned and
asked again, a repeat of a known config is told its latency, and after
:data:`_RETRIES` such suggestions a random untried config is taken
(``chosen_by="random"``). History rows of the same shape are added to the study
before it starts, and the best configs of nearby shapes are tried first
(``chosen_by="warm start"``); on a CUDA target the rest of the first batch comes from a static
prior read from the elaborated kernel (``chosen_by="static prior"``, :mod:`tilelab.tune.prior`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any, NamedTuple

from tilelab.tune.result import TuneRow, TuneStatus
from tilelab.tune.samplers import CandidatePool, SpaceGPSampler, SpaceRandomSampler, SpaceTPESampler
from tilelab.tune.space import config_key

__all__ = [
    "AUTO_FRACTION",
    "AUTO_THRESHOLD",
    "SAMPLERS",
    "SEARCHES",
    "GridFeed",
    "Job",
    "SearchSettings",
    "StudyFeed",
    "budget_count",
    "replay",
    "resolve_search",
    "study_of",
]

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
_RETRIES = 24  # suggestions outside the space or already tried, before a random config is taken
_FAILED_CONFIG = (TuneStatus.COMPILE_ERROR, TuneStatus.CANNOT_LAUNCH, TuneStatus.TIMEOUT, TuneStatus.MISMATCH, TuneStatus.RUN_ERROR)


class Job(NamedTuple):
    """One config handed to the runner: its place in the space, its trial number and who chose it."""

    index: int
    config: dict[str, Any]
    trial: int
    chosen_by: str


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


# -- feeds -----------------------------------------------------------------------------------------
class GridFeed:
    """The configs in space order (up to ``budget``), as fast as workers take them."""

    def __init__(self, todo: Sequence[tuple[int, dict[str, Any]]], budget: int | None = None) -> None:
        todo = list(todo)[:budget] if budget is not None else list(todo)
        self.pending = [Job(index, config, trial, "grid") for trial, (index, config) in enumerate(todo)]
        self.size = self.width = len(self.pending)

    def take(self, count: int) -> list[Job]:
        taken, self.pending = self.pending[:count], self.pending[count:]
        return taken

    def has_ready(self) -> bool:
        return bool(self.pending)

    def exhausted(self) -> bool:
        return not self.pending

    def told(self, row: TuneRow) -> None:
        """Grid order does not depend on results."""


class _Encoding:
    """Configs as Optuna parameters: per swept name, the index of its value (ordered when all are numbers)."""

    def __init__(self, configs: Sequence[dict[str, Any]], swept: Sequence[str]) -> None:
        from optuna.distributions import CategoricalDistribution, IntDistribution

        self.configs = list(configs)
        self.names = list(swept)
        self.values: dict[str, list[Any]] = {}
        self.distributions = {}
        for name in self.names:
            values = _unique(config.get(name, _ABSENT) for config in configs)
            if all(isinstance(v, Real) and not isinstance(v, bool) for v in values):
                values.sort()
                self.distributions[name] = IntDistribution(0, max(len(values) - 1, 0))
            else:
                self.distributions[name] = CategoricalDistribution(tuple(range(len(values))))
            self.values[name] = values
        self.keys = [self.key(config) for config in self.configs]  # by position
        self.positions = {key: position for position, key in enumerate(self.keys)}

    def params(self, config: dict[str, Any]) -> dict[str, int]:
        return {name: _position(self.values[name], config.get(name, _ABSENT)) for name in self.names}

    def key(self, config: dict[str, Any]) -> tuple[int, ...]:
        return tuple(self.params(config).values())

    def position(self, params: dict[str, int]) -> int | None:
        """Where the config of ``params`` is in the space; None when the space does not hold it."""
        return self.positions.get(tuple(params[name] for name in self.names))

    def pool(self, untried: Callable[[], Iterable[int]]) -> Any:
        """A :class:`~tilelab.tune.samplers.CandidatePool` of the configs at the positions ``untried()`` gives."""

        return CandidatePool(
            self.names, self.values, self.distributions, lambda: [self.keys[p] for p in sorted(untried())]
        )


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()


def _unique(values: Iterable[Any]) -> list[Any]:
    seen, kept = set(), []
    for value in values:
        key = value if value is _ABSENT else config_key({"v": value})
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return kept


def _position(values: list[Any], value: Any) -> int:
    if value is _ABSENT:
        return values.index(_ABSENT)
    key = config_key({"v": value})
    return next(i for i, v in enumerate(values) if v is not _ABSENT and config_key({"v": v}) == key)


def make_sampler(settings: SearchSettings, pool: Any, sampler: Any = None, startup: int = 3) -> Any:
    """The sampler of ``settings`` over ``pool`` (:class:`~tilelab.tune.samplers.CandidatePool`); ``sampler`` itself when it is one."""

    if sampler is not None and not isinstance(sampler, str):
        return sampler
    kind = {"tpe": SpaceTPESampler, "gp": SpaceGPSampler, "random": SpaceRandomSampler}[settings.sampler]
    return kind(pool, seed=settings.seed, n_startup_trials=startup)


class StudyFeed:
    """Configs asked of an Optuna study, told back as rows finish.

    Parameters
    ----------
    configs, swept
        The whole space and its swept parameter names.
    todo
        (index, config) of the configs this run may measure (the rest came from the history).
    known
        Rows of this shape already in the history: the study starts knowing them.
    settings
        The resolved search options; ``settings.budget`` bounds the configs measured.
    width
        Configs asked for at once (the compile workers).
    batch
        True: the next batch is asked for only when the last one has finished (CPU timings).
    seeds
        Configs to try first (the best of nearby shapes in the history).
    prior
        Indices of configs ranked by :func:`tilelab.tune.prior.static_order`: the first batch after the seeds.
    sampler
        An Optuna sampler object given by the user (else one is made from ``settings``).
    """

    def __init__(
        self,
        configs: Sequence[dict[str, Any]],
        swept: Sequence[str],
        todo: Sequence[tuple[int, dict[str, Any]]],
        known: Iterable[TuneRow],
        settings: SearchSettings,
        width: int,
        batch: bool,
        seeds: Iterable[dict[str, Any]] = (),
        sampler: Any = None,
        prior: Sequence[int] = (),
    ) -> None:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.configs, self.encoding = list(configs), _Encoding(configs, swept)
        self.open = {index for index, _ in todo}  # may still be measured
        self.budget = min(settings.budget or len(self.open), len(self.open))
        self.size = self.budget
        self.width, self.batch = max(1, width), batch
        self.sampler = make_sampler(settings, self.encoding.pool(lambda: self.open), sampler)
        self.study = optuna.create_study(direction="minimize", sampler=self.sampler)
        self.random = random.Random(settings.seed)
        self.trials: dict[int, Any] = {}  # index -> the study's trial, while in flight
        self.values: dict[int, float | None] = {}  # index -> what the study was told (None: failed or pruned)
        self.given = 0
        for row in known:
            self._add_known(row)
        self.seeds = [self.encoding.position(self.encoding.params(c)) for c in seeds if self._in_space(c)]
        self.seeds = [position for position in dict.fromkeys(self.seeds) if position in self.open]
        self.prior = [position for position in prior if position in self.open and position not in self.seeds][: self.width]

    # -- the runner's side ---------------------------------------------------------------------------
    def take(self, count: int) -> list[Job]:
        """Configs to compile now: a whole batch when the last has finished (CPU), else up to ``count``
        while fewer than ``width`` are in flight (GPU)."""
        if self.batch:
            if self.trials:
                return []
            count = max(count, self.width)
        else:
            count = min(count, self.width - len(self.trials))
        jobs = []
        while len(jobs) < count and not self.exhausted():
            job = self._next()
            if job is None:
                break
            jobs.append(job)
        return jobs

    def has_ready(self) -> bool:
        return not self.exhausted() and not (self.batch and self.trials) and len(self.trials) < self.width

    def exhausted(self) -> bool:
        return self.given >= self.budget or not self.open

    def told(self, row: TuneRow) -> None:
        """Tell the study how the config of ``row`` went (rows of configs it did not give are ignored)."""
        from optuna.trial import TrialState

        trial = self.trials.pop(row.index, None)
        if trial is None or row.status is TuneStatus.COMPILED:
            if trial is not None:
                self.trials[row.index] = trial  # compiled, not yet benchmarked
            return
        trial.set_user_attr("status", row.status.value)
        if row.ok and row.latency_ms is not None:
            self.study.tell(trial, row.latency_ms)
            self.values[row.index] = row.latency_ms
            return
        if row.status is TuneStatus.PRUNED and row.latency_ms is not None:
            trial.report(row.latency_ms, step=0)
        state = TrialState.FAIL if row.status in (TuneStatus.CRASHED, TuneStatus.WORKER_LOST) else TrialState.PRUNED
        self.study.tell(trial, state=state)
        self.values[row.index] = None

    def close(self) -> None:
        """End trials still in flight (an interrupted run) as failed."""
        from optuna.trial import TrialState

        for trial in self.trials.values():
            self.study.tell(trial, state=TrialState.FAIL)
        self.trials.clear()

    # -- asking ----------------------------------------------------------------------------------------
    def _next(self) -> Job | None:
        if self.seeds:
            position = self.seeds.pop(0)
            self.study.enqueue_trial(self.encoding.params(self.configs[position]))
            return self._give(position, self.study.ask(self.encoding.distributions), "warm start")
        while self.prior:
            position = self.prior.pop(0)
            if position in self.open:
                self.study.enqueue_trial(self.encoding.params(self.configs[position]))
                return self._give(position, self.study.ask(self.encoding.distributions), "static prior")
        for _ in range(_RETRIES):
            trial = self.study.ask(self.encoding.distributions)
            position = self.encoding.position(trial.params)
            if position is not None and position in self.open:
                return self._give(position, trial, "sampler")
            self._answer_known(trial, position)
        position = self.random.choice(sorted(self.open))
        self.study.enqueue_trial(self.encoding.params(self.configs[position]))
        return self._give(position, self.study.ask(self.encoding.distributions), "random")

    def _give(self, position: int, trial: Any, chosen_by: str) -> Job:
        self.open.discard(position)
        self.trials[position] = trial
        job = Job(position, self.configs[position], self.given, chosen_by)
        self.given += 1
        return job

    def _answer_known(self, trial: Any, position: int | None) -> None:
        """A suggestion that is not a new config: outside the space, in flight, or already known."""
        from optuna.trial import TrialState

        if position is not None and self.values.get(position) is not None:
            self.study.tell(trial, self.values[position])
        elif position is None or position in self.values:
            self.study.tell(trial, state=TrialState.PRUNED)  # outside the space, or a config that failed
        else:
            self.study.tell(trial, state=TrialState.FAIL)  # in flight: nothing to learn yet

    def _add_known(self, row: TuneRow) -> None:
        import optuna
        from optuna.trial import TrialState

        if not self._in_space(row.config):
            return
        position = self.encoding.position(self.encoding.params(row.config))
        params, distributions = self.encoding.params(row.config), self.encoding.distributions
        if row.ok and row.latency_ms is not None:
            trial = optuna.trial.create_trial(params=params, distributions=distributions, value=row.latency_ms)
            self.values[position] = row.latency_ms
        elif row.status in (*_FAILED_CONFIG, TuneStatus.PRUNED):
            trial = optuna.trial.create_trial(params=params, distributions=distributions, state=TrialState.PRUNED)
            self.values[position] = None
        else:
            return
        self.study.add_trial(trial)

    def _in_space(self, config: dict[str, Any]) -> bool:
        try:
            return self.encoding.position(self.encoding.params(config)) is not None
        except StopIteration:  # a value the space does not have
            return False


def study_of(result: Any) -> Any:
    """The Optuna study of ``result``: its search's own, or one rebuilt from its rows (a grid's); None without Optuna rows."""
    if getattr(result, "study", None) is not None:
        return result.study
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rows = [row for row in result.rows.values() if row.status is not TuneStatus.COMPILED]
    if not rows or not result.swept:
        return None
    encoding = _Encoding(result.configs, result.swept)
    study = optuna.create_study(direction="minimize")
    for row in rows:
        try:
            params = encoding.params(row.config)
        except StopIteration:  # a config the space does not have
            continue
        if row.ok and row.latency_ms is not None:
            study.add_trial(optuna.trial.create_trial(params=params, distributions=encoding.distributions, value=row.latency_ms))
    return study


# -- replaying a search over known outcomes ------------------------------------------------------------
def replay(feed: Any, evaluate: Callable[[Job], TuneRow]) -> list[TuneRow]:
    """Drive ``feed`` with ``evaluate`` in place of compiling and benchmarking, a batch at a time.

    ``evaluate(job)`` returns the job's row (a deterministic objective in tests, a
    measured table in ``bench/bench_search.py``). Returns the rows in the order tried.
    """
    rows = []
    while not feed.exhausted():
        jobs = feed.take(getattr(feed, "width", 1))
        if not jobs:
            break
        for job in jobs:
            row = evaluate(job)
            rows.append(row)
            feed.told(row)
    return rows
