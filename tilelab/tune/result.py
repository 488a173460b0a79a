"""Tuning rows and the result of one sweep.

A :class:`TuneRow` is data: one config, its status, timings and throughput. A
:class:`TuneResult` collects the rows of one sweep as they finish (the runner
adds them; views and the registry read them) and answers the questions asked
of a sweep: the best config, a pivot table, the compiled best kernel, and the
full compile record of any config.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = ["TuneResult", "TuneRow", "TuneStatus"]

_HIGHLIGHT = "background-color: #b7e4c7; font-weight: bold"


class TuneStatus(str, Enum):
    """How far one config got."""

    OK = "ok"
    COMPILE_ERROR = "compile_error"
    RUN_ERROR = "run_error"
    MISMATCH = "mismatch"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class TuneRow:
    """One config of a sweep and what happened to it."""

    index: int  # position in the space
    config: dict[str, Any]
    status: TuneStatus
    error: str | None = None
    latency_ms: float | None = None
    tflops: float | None = None
    gbps: float | None = None
    compile_s: float | None = None
    bench_s: float | None = None
    device: str = ""
    cached: bool = False  # restored from the history, not measured in this run

    @property
    def ok(self) -> bool:
        return self.status is TuneStatus.OK

    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.config.items())


@dataclass(eq=False)
class TuneResult:
    """The rows of one sweep, filled in while it runs.

    ``partial`` is True when the sweep was interrupted; ``running`` while it goes on.
    """

    kernel_name: str
    configs: tuple[dict[str, Any], ...]
    swept: tuple[str, ...]
    device: str
    kernel: Any = field(default=None, repr=False)
    args: tuple = field(default=(), repr=False)
    fixed: dict[str, Any] = field(default_factory=dict, repr=False)
    choice: Any = field(default=None, repr=False)
    rows: dict[int, TuneRow] = field(default_factory=dict, repr=False)
    compiled: int = 0
    benchmarked: int = 0
    running: bool = False
    partial: bool = False
    runnable: bool = True
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    _best_kernel: Any = field(default=None, repr=False)

    # -- progress -------------------------------------------------------------
    @property
    def total(self) -> int:
        return len(self.configs)

    @property
    def done(self) -> int:
        return len(self.rows)

    @property
    def num_errors(self) -> int:
        return sum(1 for row in self.rows.values() if not row.ok)

    def add(self, row: TuneRow) -> None:
        self.rows[row.index] = row

    def ordered_rows(self) -> list[TuneRow]:
        return [self.rows[i] for i in sorted(self.rows)]

    # -- answers ---------------------------------------------------------------
    @property
    def best(self) -> TuneRow | None:
        """The fastest ``ok`` row (None before any was timed, or when lowering only)."""
        timed = [row for row in self.rows.values() if row.ok and row.latency_ms is not None]
        return min(timed, key=lambda row: row.latency_ms) if timed else None

    @property
    def best_config(self) -> dict[str, Any] | None:
        best = self.best
        return dict(best.config) if best else None

    @property
    def best_kernel(self) -> Any:
        """The best config's compiled kernel (a kernel-cache hit after the sweep)."""
        if self._best_kernel is None:
            best = self.best
            if not self.runnable:
                raise ValueError(f"{self.kernel_name}: this sweep only lowered its configs (no device), so there is no kernel to run")
            if best is None:
                raise ValueError(f"{self.kernel_name}: no config ran successfully, so there is no best kernel")
            from tilelab.tune.build import build

            self._best_kernel = build(self.kernel, self.args, {**self.fixed, **best.config}, self.choice)
        return self._best_kernel

    def record(self, config: dict[str, Any] | TuneRow):
        """The full :class:`~tilelab.records.KernelRecord` of ``config`` (compiled now, passes recorded).

        Raises
        ------
        tilelab.errors.KernelCompileError
            When the config fails to compile; ``.record`` holds the failed record.
        """
        from tilelab.capture import explore

        if isinstance(config, TuneRow):
            config = config.config
        spec = self.choice.spec if self.choice is not None else None
        return explore(self.kernel, *self.args, target=spec, **{**self.fixed, **config})

    # -- tables ------------------------------------------------------------------
    def to_pandas(self):
        """One DataFrame row per finished config, in space order."""
        import pandas as pd

        columns = [*self.swept, "status", "error", "latency_ms", "tflops", "gbps", "compile_s", "bench_s", "device", "cached"]
        records = [
            {
                **{name: row.config.get(name) for name in self.swept},
                "status": row.status.value,
                "error": row.error,
                "latency_ms": row.latency_ms,
                "tflops": row.tflops,
                "gbps": row.gbps,
                "compile_s": row.compile_s,
                "bench_s": row.bench_s,
                "device": row.device,
                "cached": row.cached,
            }
            for row in self.ordered_rows()
        ]
        frame = pd.DataFrame.from_records(records, columns=columns)
        for name in ("latency_ms", "tflops", "gbps", "compile_s", "bench_s"):
            frame[name] = frame[name].astype("float64")
        frame["status"] = pd.Categorical(frame["status"], categories=[s.value for s in TuneStatus])
        frame["cached"] = frame["cached"].astype(bool)
        for name in self.swept:
            frame[name] = frame[name].infer_objects()
        return frame

    def pivot(self, index: str | None = None, columns: str | None = None, values: str = "latency_ms"):
        """A pandas ``Styler``: ``values`` over two swept parameters, the minimum highlighted.

        With more than two swept parameters each cell holds the minimum over the others.
        """
        table = self.pivot_table(index, columns, values)
        styler = table.style.highlight_min(axis=None, props=_HIGHLIGHT).format(precision=4, na_rep="—")
        return styler.set_caption(f"{self.kernel_name}: {values} (minimum highlighted)")

    def pivot_table(self, index: str | None = None, columns: str | None = None, values: str = "latency_ms"):
        """The plain DataFrame behind :meth:`pivot`."""
        index, columns = self._axes(index, columns)
        frame = self.to_pandas()
        ok = frame[frame["status"] == TuneStatus.OK.value]
        table = ok.pivot_table(index=index, columns=columns, values=values, aggfunc="min")
        labels = {name: sorted({c[name] for c in self.configs if name in c}, key=_sort_key) for name in (index, columns)}
        return table.reindex(index=labels[index], columns=labels[columns])

    def _axes(self, index: str | None, columns: str | None) -> tuple[str, str]:
        names = list(self.swept)
        if len(names) < 2 and (index is None or columns is None):
            raise ValueError(f"pivot() needs two swept parameters; this sweep has {names}")
        index = index or next(n for n in names if n != columns)
        columns = columns or next(n for n in names if n != index)
        for name in (index, columns):
            if name not in names:
                raise ValueError(f"{name!r} is not a swept parameter; choose from {names}")
        return index, columns

    # -- listing -------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """A small JSON-ready dict for the registry and the panel."""
        best = self.best
        return {
            "id": self.id,
            "name": self.kernel_name,
            "total": self.total,
            "done": self.done,
            "compiled": self.compiled,
            "benchmarked": self.benchmarked,
            "failed": self.num_errors,
            "best_config": best.config if best else None,
            "best_latency_ms": best.latency_ms if best else None,
            "device": self.device,
            "running": self.running,
            "partial": self.partial,
        }

    def __repr__(self) -> str:
        state = "running" if self.running else "partial" if self.partial else "done"
        best = self.best
        found = f", best {best.latency_ms:.4g} ms at {best.label()}" if best else ""
        return f"<TuneResult {self.kernel_name} {state}: {self.done}/{self.total} configs, {self.num_errors} failed{found}>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        from tilelab.views.tuning import TuningView

        return TuningView(self)._repr_mimebundle_(include=include, exclude=exclude)


def _sort_key(value: Any) -> tuple:
    return (0, value, "") if isinstance(value, (int, float)) and not math.isnan(value) else (1, 0, repr(value))


def throughput(amount: float | None, latency_ms: float | None, scale: float) -> float | None:
    """``amount`` per second in units of ``scale`` (1e12 for TFLOP/s, 1e9 for GB/s)."""
    if amount is None or not latency_ms:
        return None
    return amount / (latency_ms * 1e-3) / scale
