"""Runs of a kernel: every compile of one kernel name in a session, oldest first, and what changed between them.

The registry keeps the records; a run is a record that compiled (a cache hit
re-shows a run, it is not a new one). Run numbers start at 1 and follow the
order the compiles happened in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilelab.changes import RecordChanges, record_changes
from tilelab.recompiled import WhyRecompiled, why
from tilelab.records import KernelRecord

__all__ = ["RunsError", "SinceLastRun", "pick_runs", "runs_of", "since_last_run", "why_of_runs"]


class RunsError(ValueError):
    """A run that does not exist was asked for (one line for the magic)."""


def runs_of(registry: Any, name: str) -> list[KernelRecord]:
    """The runs of kernel ``name`` still in the registry, oldest first."""
    runs = [record for record in registry.records() if record.name == name]
    return sorted(runs, key=lambda record: record.created)


def pick_runs(registry: Any, name: str, numbers: list[str]) -> tuple[KernelRecord, KernelRecord, int, int]:
    """Runs ``A`` and ``B`` of ``name`` (1-based, negative counts from the newest; default the last two)."""
    runs = runs_of(registry, name)
    if not runs:
        raise RunsError(f"no kernel called {name!r} compiled in this session; %tilelang list shows them")
    if len(numbers) not in (0, 2):
        raise RunsError("usage: %tilelang diff NAME [A B]  (run numbers; default: the last two)")
    if len(runs) < 2 and not numbers:
        raise RunsError(f"{name} has one run so far: edit the cell and run it again, then diff")
    try:
        first, second = (int(n) for n in numbers) if numbers else (len(runs) - 1, len(runs))
    except ValueError:
        raise RunsError(f"run numbers must be integers, got {' '.join(numbers)!r}") from None
    picked = []
    for number in (first, second):
        index = number - 1 if number > 0 else len(runs) + number
        if not 0 <= index < len(runs) or number == 0:
            raise RunsError(f"{name} has runs 1..{len(runs)}; there is no run {number}")
        picked.append(index)
    return runs[picked[0]], runs[picked[1]], picked[0] + 1, picked[1] + 1


@dataclass(frozen=True)
class SinceLastRun:
    """What changed from the previous run of a kernel that compiled to this one."""

    name: str
    run: int  # this run's number
    changes: RecordChanges | None  # None: no earlier run compiled, or this one failed
    why: WhyRecompiled | None = None  # which components of TileLang's cache key changed (None: nothing to compare)
    against: int | None = None  # the run compared with: the last earlier one that compiled
    failed: bool = False  # this run failed: there is nothing to compare

    def text(self) -> str:
        if self.failed:
            return f"{self.name}: run {self.run} failed (its error is above); earlier runs are unchanged"
        if self.changes is None:
            first = "first run" if self.run == 1 else "first run that compiled"
            return f"{self.name}: run {self.run} ({first} in this session)"
        skipped = "" if self.against == self.run - 1 else " (the runs between failed)"
        return f"{self.name}: run {self.run} vs run {self.against}{skipped}: {self.changes.headline()}"


def since_last_run(registry: Any, record: KernelRecord) -> SinceLastRun:
    """This record against the last earlier run of the same kernel that compiled (both in the registry).

    A failed run is compared with nothing, and nothing is compared with a failed run: a
    failure has no passes or code, so a comparison would count everything as removed.
    """
    runs = runs_of(registry, record.name)
    position = next((i for i, run in enumerate(runs) if run.id == record.id), len(runs))
    if not record.ok:
        return SinceLastRun(record.name, position + 1, None, failed=True)
    earlier = [(number, run) for number, run in enumerate(runs[:position], start=1) if run.ok]
    if not earlier:
        return SinceLastRun(record.name, position + 1, None)
    number, previous = earlier[-1]
    return SinceLastRun(record.name, position + 1, record_changes(previous, record), why(previous, record), against=number)


def why_of_runs(registry: Any, name: str, numbers: list[str]) -> WhyRecompiled:
    """Why run ``B`` of ``name`` recompiled after run ``A`` (default: the last two runs).

    When the newest record was served from TileLab's cell cache, that is the answer
    (a cache hit) rather than a comparison of the two compiles before it.
    """
    latest = registry.latest(name)
    if latest is not None and latest.from_cache and not numbers:
        return why(latest, latest)
    before, after, _, _ = pick_runs(registry, name, numbers)
    return why(before, after)
