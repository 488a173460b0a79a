"""The executor seam: what the sweep loop needs from an engine that runs its compiles and benchmarks.

An :class:`Engine` is told to compile or to benchmark one config (or to time
the top configs again, interleaved), reports what happened as :data:`Event`
values, and can cancel everything. Every method returns at once; results
arrive through :meth:`Engine.events`. The one sweep loop,
:func:`tilelab.tune.runner.run_sweep`, drives any engine with the same
bookkeeping (its feed of configs, rows, history writes, pruning, confirmation
of suspiciously fast timings, the interleaved re-benchmark and its verdict,
the wall-clock budget, the timeline, interrupts), so rows are the same
whichever engine measured them. TileLab ships two:
:class:`tilelab.tune.local_engine.LocalEngine` (compile processes from the
session's pool, benchmarks in the notebook's process) and
:class:`tilelab.tune.dask_engine.DaskEngine` (a Dask cluster); another (Ray, a
batch queue) would implement the same methods.

Engines report facts, the loop decides: which config runs next, when a
benchmark may start (on the CPU, only when no compile runs), whether a timing
is confirmed, what a lost task becomes. Engines also say when a config enters
a phase only they can see (:class:`Phase`: queued for a worker, compiling on
worker 3, checking, benchmarking), and how their compile workers started
(:class:`Workers`), for the sweep's timeline.
"""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from tilelab.tune.bench import BenchOutcome
from tilelab.tune.noise import Rebenched
from tilelab.tune.timeline import WorkerStart

__all__ = [
    "Benched",
    "Compiled",
    "Engine",
    "Event",
    "Lost",
    "Phase",
    "Retimed",
    "TuneSetupError",
    "Workers",
    "drain",
]


class TuneSetupError(RuntimeError):
    """The compile workers could not start or could not rebuild the kernel."""


@dataclass(frozen=True)
class Compiled:
    """A compile task ended; ``status`` is a :class:`TuneStatus` value (``ok`` when it compiled)."""

    index: int
    config: dict
    status: str
    error: str | None
    seconds: float
    columns: dict = field(default_factory=dict)  # the row's machine-code columns
    notes: tuple[str, ...] = ()  # what the compile could not do, for the result's notes
    ended: float | None = None  # when it ended (monotonic; None: when the event was read)


@dataclass(frozen=True)
class Benched:
    """A benchmark task ended on ``device`` (None: the device the sweep resolved, this machine's)."""

    index: int
    config: dict
    outcome: BenchOutcome
    device: str | None = None


@dataclass(frozen=True)
class Retimed:
    """The interleaved re-benchmark of the top configs ended (``found`` None: fewer than two could be timed)."""

    found: Rebenched | None
    device: str | None = None


@dataclass(frozen=True)
class Lost:
    """The worker holding a task (``stage``: ``compile``, ``bench`` or ``rebench``) went away before it ended."""

    index: int
    config: dict
    stage: str
    worker: str


@dataclass(frozen=True)
class Phase:
    """Config ``index`` entered ``phase`` (:data:`tilelab.tune.timeline.PHASES`) at ``at`` (monotonic) on ``lane``."""

    index: int
    phase: str
    lane: str
    at: float


@dataclass(frozen=True)
class Workers:
    """Compile workers of this sweep: ``warm`` taken running from a pool, ``cold`` started, the slowest
    of them ready to compile after ``cold_start_s`` seconds (None: not known yet); ``start``: how one
    cold worker started (forked by the zygote, or spawned and why), told once it is ready."""

    warm: int = 0
    cold: int = 0
    cold_start_s: float | None = None
    start: WorkerStart | None = None


Event = Compiled | Benched | Retimed | Lost | Phase | Workers


class Engine(Protocol):
    """Runs one sweep's tasks; every method returns at once, results arrive through :meth:`events`."""

    name: str
    ahead: int  # the loop keeps up to ``ahead * slots()`` compiles submitted

    def resolve(self, arch: str | None, target: Any) -> tuple[Any, str]:
        """The ``TargetChoice`` and the device name of the workers that benchmark (before the sweep)."""

    def start(self, sweep: Any, sweep_id: str, width: int) -> None:
        """Get ready to run ``sweep``'s tasks (before the first is submitted); at most ``width`` compiles
        will be wanted at once."""

    def slots(self) -> int:
        """How many compiles can run at once now."""

    def bench_slots(self) -> int:
        """How many benchmarks can run at once now (one per device); the loop submits no more."""

    def compile(self, index: int, config: dict) -> None:
        """Submit the compile of one config (again, after a loss: the earlier task is forgotten)."""

    def bench(self, index: int, config: dict, best_so_far: float | None = None, again: bool = False) -> None:
        """Submit the benchmark of one compiled config (``best_so_far``: stop early when over twice it).

        ``again``: time the config once more, where it was just timed (a suspiciously fast
        first timing being confirmed); no early stop, no second reference check needed.
        """

    def rebench(self, configs: dict[int, dict], calls: dict[int, int]) -> None:
        """Time ``configs`` (index → config) again interleaved on one device, ``calls[index]`` calls a turn."""

    def events(self, timeout: float) -> list[Event]:
        """What happened since the last call, waiting up to ``timeout`` seconds for the first event."""

    def withdraw(self) -> list[int]:
        """Drop the compiles submitted but not started (a spent budget); their indices."""

    def compiles_done(self) -> None:
        """Nothing more will be compiled this sweep: compile workers may be let go."""

    def device_state(self) -> dict | None:
        """The benchmark GPU's clocks and temperature now (None: not known, or no GPU)."""

    def cancel(self) -> None:
        """Drop every submitted task (an interrupt)."""

    def close(self) -> None:
        """Release what the sweep held (workers, kept kernels, a client this engine opened)."""


def drain(events: queue.SimpleQueue, timeout: float) -> list[Any]:
    """Everything in ``events``, waiting up to ``timeout`` for the first item (engines' helper)."""
    try:
        items = [events.get(timeout=timeout)]
    except queue.Empty:
        return []
    deadline = time.monotonic() + 0.05  # what arrives right after the first comes along
    while True:
        try:
            items.append(events.get(timeout=max(0.0, deadline - time.monotonic())))
        except queue.Empty:
            return items
