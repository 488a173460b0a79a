"""``tilelab.tune(...)`` and ``%tilelang tune NAME ...``: build the space, run it, keep the history."""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from tilelab import _tilelang as tl
from tilelab.registry import default_registry
from tilelab.tune.budget import split_budget
from tilelab.tune.build import kernel_name, kernel_source, spec_of
from tilelab.tune.dask_engine import DaskEngine
from tilelab.tune.engine import Engine
from tilelab.tune.local_engine import LocalEngine
from tilelab.tune.prior import static_order
from tilelab.tune.result import TuneResult, TuneRow
from tilelab.tune.runner import Sweep, run_sweep
from tilelab.tune.search import GridFeed, SearchSettings, StudyFeed, resolve_search
from tilelab.tune.space import Choices, Space, config_key, int_parameters
from tilelab.tune.store import RunKey, TuningStore, open_history, signature_of
from tilelab.tune.tune_line import parse_tune_line

__all__ = ["LARGE_GRID", "LargeSpaceWarning", "NotTunableError", "tune", "tune_from_line"]


LARGE_GRID = 1000  # configs: a grid above this is warned about before it starts


class LargeSpaceWarning(UserWarning):
    """A grid sweep of more than :data:`LARGE_GRID` configs is about to start."""


class NotTunableError(TypeError, ValueError):
    """``tune()`` was given something compile workers cannot rebuild (a ValueError too: bad input, one line)."""


def tune(
    kernel: Any,
    *args: Any,
    configs: Iterable[Mapping[str, Any]] | None = None,
    where: Callable[[dict[str, Any]], bool] | None = None,
    reference: Callable | None = None,
    flops: float | Callable[[dict], float] | None = None,
    bytes: float | Callable[[dict], float] | None = None,
    target: Any = None,
    arch: str | None = None,
    timeout: float = 120.0,
    workers: int | None = None,
    force: bool = False,
    db: str | Path | None = None,
    rtol: float = 1e-2,
    atol: float = 1e-2,
    search: str = "grid",
    budget: int | float | str | None = None,
    seed: int | None = None,
    sampler: Any = None,
    prune: bool | None = None,
    rebench: int = 3,
    resources: bool = True,
    cluster: Any = None,
    timer: Callable[[dict, int], Iterable[float]] | None = None,
    on_row: Callable[[TuneRow], None] | None = None,
    live: bool | None = None,
    **kwargs: Any,
) -> TuneResult:
    """Compile and benchmark every config of a space; every config becomes a row.

    Parameters
    ----------
    kernel
        A ``@tilelang.jit`` function (or a plain function returning a ``PrimFunc``).
    *args, **kwargs
        Passed to every compile; keyword arguments given as :func:`~tilelab.choices`
        are swept (grid product).
    configs
        Instead of ``choices``: an iterable (a generator is fine) of config dicts.
    where
        Keep only the configs for which ``where(config)`` is true.
    reference
        A callable taking the kernel's inputs; outputs must match (``allclose``)
        or the row is a ``mismatch``.
    flops, bytes
        Work per call (a number or ``f(config)``) for the TFLOP/s and GB/s columns.
    target, arch
        ``target="c"`` runs CPU kernels; without a GPU, CUDA kernels are lowered for
        ``arch`` (default ``sm_90``) and rows record compile status only.
    timeout
        Seconds one config may compile before its worker is killed (a ``timeout`` row).
    workers
        Compile processes (default: one per available CPU).
    force
        Measure again configs already in the history for this kernel, arguments and device.
        Without it, the history answers for a config unless its row was a failure of the
        run rather than of the config: a crashed worker, a config compiled but never
        benchmarked (an interrupt), a ``timeout`` under a shorter limit than ``timeout``,
        or any failure recorded under another TileLang version. Those are measured again.
    db
        The history database (default ``$TILELAB_DB`` or ``~/.tilelab/tilelab.db``), or a
        PostgreSQL URL (``postgresql://user@host/db``) that several hosts share;
        ``":memory:"`` keeps this run's rows in memory only. The file is checked
        before anything compiles: a file named by ``db=`` or ``$TILELAB_DB`` that
        cannot be used (a directory, not SQLite, read-only, another format) raises
        :class:`~tilelab.tune.store.TuningHistoryError` naming it; an unusable default
        file only warns, and the run keeps its rows in memory. A file that fails
        mid-run warns too: the returned result always holds every row.
    search
        ``"grid"`` (default) measures every config in order; ``"optuna"`` lets an
        Optuna study (TPE, seeded by ``seed``) pick ``budget`` configs, asking for
        batches as wide as the compile workers and learning from every row,
        failures included; ``"auto"`` searches spaces of more than
        :data:`~tilelab.tune.search.AUTO_THRESHOLD` (40) configs (with 30 % of the
        space unless ``budget`` says otherwise) and runs the grid on smaller ones,
        where a search measured no better than the grid's own order. A grid of
        more than :data:`LARGE_GRID` (1000) configs warns (:class:`LargeSpaceWarning`)
        before it starts.
        Every trial is a row, with its ``trial`` number and ``chosen_by``
        (``grid``, ``sampler``, ``warm start``: the best config of a nearby shape
        in the history, ``static prior``: the first batch on a CUDA target, ranked
        from the elaborated kernel by :mod:`tilelab.tune.prior`, or ``random``: the
        sampler kept repeating itself).
    budget
        The configs this run may measure: a number, or a fraction (0 < f <= 1) of
        the space. Rows restored from the history do not count. Or a wall-clock
        budget: a duration (``"3min"``, ``"90s"``, ``"1h30m"``, a ``timedelta``) from
        this call; no config starts after it, the best so far is returned, and
        ``result.coverage()`` says how much of the space was covered
        (:mod:`tilelab.tune.budget`).
    seed
        The sampler's seed (searches are reproducible with it).
    sampler
        ``"tpe"`` (default: Optuna's TPE scored over every untried config), ``"gp"``
        (a Gaussian process with expected improvement) or ``"random"``
        (:mod:`tilelab.tune.samplers`), or any Optuna sampler object.
    prune
        Stop a benchmark whose first calls are over twice the best so far (a
        ``pruned`` row saying why). Default: on for searches, off for the grid.
        Configs that cannot launch are never benchmarked either way.
    rebench
        At the end, benchmark the ``rebench`` fastest configs again, interleaved
        (A B C A B C …, so drift cancels) with no compile running, into ``rebench_ms``;
        the best is chosen on that, and ``result.verdict_text()`` says by how much
        (``best by 2.1 % (± 0.3 %)``) or that the top configs are tied at this noise
        (:mod:`tilelab.tune.noise`). 0 turns it off.
    resources
        For CUDA targets, the ``registers``, ``spills``, ``shared_bytes``,
        ``occupancy`` and ``launchable`` columns (nvcc and ptxas, or the cubin
        TileLang built: 2-3 s more per lowered config, measured on 2 cores, mostly nvcc's
        front end; a compiled config only runs cuobjdump). ``False`` turns them off.
        A config over the arch's limits (registers included) is ``cannot_launch``.
        Without nvcc the columns stay empty and ``result.notes`` says why.
    cluster
        Compile and benchmark on a Dask cluster instead of this machine: a
        ``distributed.Client``, a scheduler address (``"tcp://host:8786"``) or a Dask
        cluster object (``pip install 'tilelab[cluster]'``; see
        :mod:`tilelab.tune.dask_engine` and :func:`tilelab.cluster.local`). The target
        and device are those of its GPU workers; ``workers`` is ignored. A worker lost
        mid-task gives a ``worker_lost`` row and the task is retried once elsewhere.
    timer
        ``timer(config, calls)`` returns the times (ms) of ``calls`` calls of a config
        (``config``: its keyword arguments, fixed ones included), instead of CUDA
        events or the wall clock: a seeded fake timer in tests, or another profiler.
        Each config is still built, run once and checked against ``reference``; only
        its timings come from the timer. With ``cluster`` the timer travels to the
        benchmark workers (cloudpickle): each keeps its own copy for the sweep.
    on_row
        Called with each finished :class:`~tilelab.tune.result.TuneRow`.
    live
        Show the live view (default: when running in a Jupyter kernel).

    Returns
    -------
    TuneResult
        All rows; ``partial`` is True when interrupted (Ctrl-C / kernel interrupt).

    Raises
    ------
    ValueError
        Before anything compiles, for a bad option, an empty space, an unknown target,
        or an unusable history (:class:`~tilelab.tune.store.TuningHistoryError`).
    NotTunableError
        When ``kernel`` is not a kernel that compile workers can rebuild.
    """

    started = time.monotonic()  # the timeline's zero, and where a wall-clock budget starts
    _check_options(timeout, workers, db, rebench, resources)
    if timer is not None and not callable(timer):
        raise ValueError(f"timer={timer!r}: expected a function timer(config, calls) -> times in ms")
    budget, budget_s = split_budget(budget)
    try:
        spec = spec_of(kernel)
    except TypeError as exc:
        raise NotTunableError(str(exc)) from None
    if configs is None and tl.is_autotuned(kernel) and not any(isinstance(v, Choices) for v in kwargs.values()):
        configs = tl.autotune_configs(kernel, args, kwargs)  # the kernel's own @autotune space
    space = Space.build(kwargs, where=where, configs=configs)
    engine = _engine(cluster, workers, len(space))
    try:
        if target is None and arch is None:
            target = tl.declared_host_target(kernel)
        choice, device = engine.resolve(arch, target)
    except BaseException:
        engine.close()
        raise
    name = kernel_name(kernel)
    key = RunKey.of(name, kernel_source(kernel), signature_of(args, space.fixed), choice.as_json(), device)
    settings = resolve_search(search, budget, seed, sampler, prune, len(space), choice.runnable)
    store = open_history(db)
    tilelang_version = _tilelang_version()
    result = TuneResult(name, space.configs, space.swept, device, kernel, args, space.fixed, choice, runnable=choice.runnable)
    result.budget_s = budget_s
    measured = {} if force else store.measured(key)
    todo, known = [], []
    for index, config in enumerate(space.configs):
        past = measured.get(config_key(config))
        if past is not None and past.stands(tilelang_version, timeout):
            row = replace(past.row, index=index, config=config, trial=None, chosen_by="history", elapsed_s=None, rebench_ms=None)
            result.add(row)
            known.append(row)
        else:
            todo.append((index, config))
    feed = _feed(settings, space, todo, known, store, key, engine.slots(), choice, sampler, kernel, args)
    if settings.kind == "grid" and feed.size > LARGE_GRID:
        warnings.warn(_large_grid(feed.size, choice.runnable), LargeSpaceWarning, stacklevel=3)
    result.search = settings
    result.study = getattr(feed, "study", None)
    if settings.budget is not None:
        result.planned = len(result.rows) + feed.size
    int_params = int_parameters(tl.python_function(kernel))
    sweep = Sweep(
        kernel, spec, args, space.fixed, choice, timeout, workers, reference, rtol, atol, flops, bytes, int_params,
        resources=resources, prune=settings.prune, rebench=rebench, timer=timer, started=started,
        deadline=started + budget_s if budget_s is not None else None,
    )  # fmt: skip
    registry = default_registry()
    result.reference, result.rtol, result.atol = reference, rtol, atol  # a row's reproducer checks with them
    sweep.on_progress.append(lambda: registry.track_tuning(result))
    if on_row is not None:
        sweep.on_row.append(on_row)
    # The live view (tilelab.display) follows the run through the registry's tuning events.
    result.show_live = live if live is not None else _in_kernel()
    registry.track_tuning(result)
    try:
        run_sweep(sweep, result, feed, store.saver(key, result.id, tilelang_version, timeout), engine)
    finally:
        registry.track_tuning(result)
        engine.close()
    return result


def _large_grid(size: int, runnable: bool) -> str:
    """Why a grid of ``size`` configs deserves a word before it starts, and what to do instead."""
    if not runnable:
        return f"{size} configs on the grid, each lowered in turn; narrow the space with where= or set budget="
    return (
        f"{size} configs on the grid, each compiled and timed in turn; a search measures only its budget: "
        "search='optuna', budget=200 (command line: --search optuna --budget 200)"
    )


def _engine(cluster: Any, workers: int | None, size: int) -> Engine:
    """The engine that runs a sweep: on ``cluster``, or this machine's compile workers and GPU
    (which start at once in the session's pool, importing TileLang while the rest is set up)."""
    return LocalEngine(workers, warm=size) if cluster is None else DaskEngine(cluster)


def _check_options(timeout: Any, workers: Any, db: Any, rebench: Any, resources: Any) -> None:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout={timeout!r}: expected a positive number of seconds")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers={workers!r}: expected a positive int (or None: one per CPU)")
    if db is not None and not isinstance(db, (str, os.PathLike)):
        raise ValueError(f"db={db!r}: expected a file path, a PostgreSQL URL, or ':memory:'")
    if isinstance(rebench, bool) or not isinstance(rebench, int) or rebench < 0:
        raise ValueError(f"rebench={rebench!r}: expected how many top configs to benchmark again (0: none)")
    if not isinstance(resources, bool):
        raise ValueError(f"resources={resources!r}: expected True or False")


def _feed(
    settings: SearchSettings,
    space: Space,
    todo: list[tuple[int, dict]],
    known: list[TuneRow],
    store: TuningStore,
    key: RunKey,
    workers: int,
    choice: Any,
    sampler: Any,
    kernel: Any,
    args: tuple,
) -> GridFeed | StudyFeed:
    """The configs of this run: the grid (up to the budget), or a study warm-started from nearby shapes.

    A study asks for at most a quarter of its budget at once (at least 2): what it learns
    from one batch is what makes the next better than random.
    """
    if settings.kind == "grid":
        return GridFeed(todo, settings.budget)
    budget = settings.budget or len(todo)
    width = max(1, min(workers, max(2, -(-budget // 4))))
    seeds = store.nearby(key, limit=width)
    prior = static_order(kernel, args, space.fixed, todo, choice, settings.seed)
    return StudyFeed(
        space.configs, space.swept, todo, known, settings, width, batch=not choice.is_cuda, seeds=seeds, sampler=sampler, prior=prior
    )


def _tilelang_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tilelang")
    except PackageNotFoundError:
        return ""


def _in_kernel() -> bool:
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def tune_from_line(line: str, user_ns: dict[str, Any]) -> TuneResult:
    """Run ``%tilelang tune NAME [ARGS...] key=v1,v2 ... [timeout=60] [--target c]``.

    ``NAME`` is a kernel in ``user_ns``; bare tokens are positional arguments;
    ``key=v1,v2,...`` sweeps ``key`` over the values, ``key=v`` fixes it. Values
    are Python literals (or names defined in the notebook); ``where`` takes a
    string expression over the parameters, e.g. ``where='block_M*block_N<=16384'``.
    Options of :func:`tune` may also be written ``--arch sm_80``, ``--timeout=60``,
    ``--force``, ``--search optuna --budget 0.3 --seed 0`` or ``--prune``.

    Raises
    ------
    ValueError
        With one line naming the token that could not be read.
    """
    kernel, args, kwargs = parse_tune_line(line, user_ns)
    return tune(kernel, *args, **kwargs)
