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

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from tilelab.tune.config_encoding import ConfigEncoding
from tilelab.tune.result import TuneRow, TuneStatus
from tilelab.tune.samplers import SpaceGPSampler, SpaceRandomSampler, SpaceTPESampler
from tilelab.tune.search_settings import (
    AUTO_FRACTION,
    AUTO_THRESHOLD,
    SAMPLERS,
    SEARCHES,
    SearchSettings,
    budget_count,
    resolve_search,
)

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

_RETRIES = 24  # suggestions outside the space or already tried, before a random config is taken
_FAILED_CONFIG = (TuneStatus.COMPILE_ERROR, TuneStatus.CANNOT_LAUNCH, TuneStatus.TIMEOUT, TuneStatus.MISMATCH, TuneStatus.RUN_ERROR)


class Job(NamedTuple):
    """One config handed to the runner: its place in the space, its trial number and who chose it."""

    index: int
    config: dict[str, Any]
    trial: int
    chosen_by: str


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
        self.configs, self.encoding = list(configs), ConfigEncoding(configs, swept)
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
    encoding = ConfigEncoding(result.configs, result.swept)
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
