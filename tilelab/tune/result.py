"""The result of one sweep (its rows are :mod:`tilelab.tune.row`'s, exported here too).

A :class:`TuneResult` collects the rows of one sweep as they finish (the runner
adds them; views and the registry read them) and answers the questions asked of
a sweep: the best config (on the serial re-benchmark of the top configs when
there is one), a pivot table, the compiled best kernel, and the full compile
record of any config.
"""

from __future__ import annotations

import html
import math
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from tilelab.capture import explore
from tilelab.provenance import PROVENANCE_COLUMNS
from tilelab.targets import why_lowered
from tilelab.tune.budget import coverage_of
from tilelab.tune.build import build
from tilelab.tune.repro import row_reproducer
from tilelab.tune.row import (
    RESOURCE_COLUMNS,
    ROOFLINE_COLUMNS,
    SPREAD_COLUMNS,
    TRUST_COLUMNS,
    TuneRow,
    TuneStatus,
    best_rank,
    throughput,
)
from tilelab.tune.timeline import frame_of

__all__ = [
    "RESOURCE_COLUMNS",
    "ROOFLINE_COLUMNS",
    "SPREAD_COLUMNS",
    "TRUST_COLUMNS",
    "TuneResult",
    "TuneRow",
    "TuneStatus",
    "best_rank",
    "throughput",
]


_INT_COLUMNS = ("repetitions", "registers", "spills", "shared_bytes", "trial")
_FLOAT_COLUMNS = ("latency_ms", *SPREAD_COLUMNS, "rebench_ms", "tflops", "gbps", "compile_s", "bench_s", "occupancy", "elapsed_s",
                  *ROOFLINE_COLUMNS, *TRUST_COLUMNS[1:])  # fmt: skip

_HIGHLIGHT = "background-color: #b7e4c7; font-weight: bold"


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
    show_live: bool = False  # display the live view while it runs (tilelab.display follows the registry)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    notes: list[str] = field(default_factory=list)  # one line each: what the run could not do, and why
    reference: Any = field(default=None, repr=False)  # the tune call's reference, rtol and atol (for reproducers)
    rtol: float = 1e-2
    atol: float = 1e-2
    search: Any = None  # tilelab.tune.search.SearchSettings of a search run; None for a plain grid
    planned: int | None = None  # configs this run will have rows for (a search's budget), when not all
    study: Any = field(default=None, repr=False)  # the Optuna study of a search run
    timeline_record: Any = field(default=None, repr=False)  # tilelab.tune.timeline.Timeline: every config's phases
    verdict: Any = None  # tilelab.tune.noise.Verdict of the interleaved re-benchmark (None without one)
    budget_s: float | None = None  # the wall-clock budget (tune(budget="3min")), in seconds
    budget_reached: bool = False  # the budget ran out with configs not started
    gpu_state: dict | None = None  # {"start": ..., "end": ...}: clocks, temperature, power (None off a GPU)
    _best_kernel: Any = field(default=None, repr=False)

    # -- progress -------------------------------------------------------------
    @property
    def total(self) -> int:
        """The rows this run will have: every config of the space, or a search's budget (and history rows)."""
        return len(self.configs) if self.planned is None else self.planned

    @property
    def done(self) -> int:
        return len(self.rows)

    @property
    def num_errors(self) -> int:
        return sum(1 for row in self.rows.values() if row.status not in _NOT_ERRORS)

    def note(self, text: str) -> None:
        """Add a note once."""
        if text not in self.notes:
            self.notes.append(text)

    def add(self, row: TuneRow) -> None:
        if row.status in _REPRODUCIBLE_FAILURES and self.kernel is not None:
            self.note(f"a failed config's reproducer: result.rows[{row.index}].repro() (a file that needs only tilelang and torch)")
        self.rows[row.index] = row if row.result is self else replace(row, result=self)

    def repro(self, config: dict[str, Any] | TuneRow) -> str:
        """A standalone Python file that compiles ``config`` of this sweep again and checks it.

        It holds the kernel's source, the config's arguments, the target and the
        ``@tilelang.jit`` options, seeded inputs and the sweep's ``reference`` (or a
        NaN/Inf check), under a header saying what this sweep observed (its status,
        error and latency); it imports only ``tilelang`` and ``torch``.
        """

        row = config if isinstance(config, TuneRow) else next((r for r in self.rows.values() if r.config == config), None)
        if row is None:
            row = TuneRow(-1, dict(config), TuneStatus.COMPILED)  # not run yet: nothing observed
        return row_reproducer(self, row)

    def ordered_rows(self) -> list[TuneRow]:
        return [self.rows[i] for i in sorted(self.rows)]

    # -- answers ---------------------------------------------------------------
    @property
    def best(self) -> TuneRow | None:
        """The fastest ``ok`` row (None before any was timed, or when lowering only).

        When the top configs were benchmarked again one after another at the end
        (``rebench_ms``), the best is the fastest of that re-benchmark.
        """
        timed = [row for row in self.rows.values() if row.ok and (row.rebench_ms is not None or row.latency_ms is not None)]
        return min(timed, key=lambda row: best_rank(row.latency_ms, row.rebench_ms)) if timed else None

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
                because = why_lowered(self.choice)
                raise ValueError(f"{self.kernel_name}: this sweep only lowered its configs ({because}), so there is no kernel to run")
            if best is None:
                raise ValueError(f"{self.kernel_name}: no config ran successfully, so there is no best kernel")

            self._best_kernel = build(self.kernel, self.args, {**self.fixed, **best.config}, self.choice)
        return self._best_kernel

    def record(self, config: dict[str, Any] | TuneRow):
        """The full :class:`~tilelab.records.KernelRecord` of ``config`` (compiled now, passes recorded).

        The record carries the config's measured latency when its row has one
        (so its Overview shows the percent of the static roofline).

        Raises
        ------
        tilelab.errors.KernelCompileError
            When the config fails to compile; ``.record`` holds the failed record.
        """

        row = config if isinstance(config, TuneRow) else next((r for r in self.rows.values() if r.config == config), None)
        config = row.config if row is not None else config
        spec = self.choice.spec if self.choice is not None else None
        record = explore(self.kernel, *self.args, target=spec, **{**self.fixed, **config})
        return record.with_latency(row.latency_ms) if row is not None and row.latency_ms is not None else record

    # -- where the time went, and how sure the best is -------------------------------
    def timeline(self):
        """Every config's phases as a DataFrame (:mod:`tilelab.tune.timeline`), one row per span.

        Columns: the swept parameters, ``index``, ``phase`` (``queued``, ``compiling``,
        ``compiled``, ``waiting``, ``checking``, ``benchmarking``, ``confirming``,
        ``rebenchmarking``), ``start_s`` and ``end_s`` (seconds from the ``tune()``
        call), ``duration_s`` and ``lane`` (the compile worker, or ``bench``).
        """

        return frame_of(self)

    def timeline_summary(self) -> str:
        """One line: how busy the compile workers and the bench slot were, and what bounded the sweep."""
        summary = self.timeline_record.summary() if self.timeline_record is not None else None
        return summary.text() if summary is not None else ""

    @property
    def rebenchmarked_best(self) -> TuneRow | None:
        """The best row when the re-benchmark at the end chose it with a verdict (the row the tables star), else None."""
        return None if self.verdict is None else self.best

    def verdict_text(self) -> str:
        """``best by X % (± Y %)`` or ``top 2 indistinguishable at this noise (± Y %)``; empty without a re-benchmark."""
        return self.verdict.text() if self.verdict is not None else ""

    def tied(self) -> tuple[int, ...]:
        """Indices of the configs the re-benchmark could not tell from the best (the best not included)."""
        return tuple(self.verdict.tied) if self.verdict is not None else ()

    def coverage(self) -> str:
        """How much of the space this run covered, and whether the wall-clock budget stopped it."""

        return coverage_of(self)

    # -- tables ------------------------------------------------------------------
    def to_pandas(self):
        """One DataFrame row per finished config, in space order.

        After the others, the provenance columns say who served each config's compile
        (``cache``: TileLang's ``memory`` or ``disk`` cache, or ``fresh``), TileLang's key
        and disk entry (``cache_key``, ``cache_entry``) and the key's components, each
        hashed (``key_tir``, ``key_target``, ``key_pass_configs``, ``key_compile_flags``,
        ``key_options``, ``key_tilelang``, ``key_source``; :mod:`tilelab.provenance`).

        Columns: the swept parameters, ``status``, ``error``, ``latency_ms`` and its
        spread (``latency_min_ms``, ``latency_median_ms``, ``latency_p90_ms``,
        ``latency_std_ms``, ``repetitions``), ``rebench_ms``, ``tflops``, ``gbps``,
        ``compile_s``, ``bench_s``, the machine-code columns (``registers``,
        ``spills``, ``shared_bytes``, ``occupancy``, ``launchable``; empty without
        nvcc or off CUDA), the static roofline (``roofline_ms``, and ``roofline_pct``
        of ``latency_ms``; empty where tilelang's Analyzer cannot count the kernel,
        and for rows of a history written before it stored them), ``trial``,
        ``chosen_by``, ``elapsed_s``, how it was timed (``timing``, and the noise band
        ``noise_low_ms``..``noise_high_ms``: the 95 % interval of the median; ``first_ms``
        the first timing of a config confirmed by a second), ``device``, ``cached``.
        """
        import pandas as pd

        names = ["status", "error", "latency_ms", *SPREAD_COLUMNS, "repetitions", "rebench_ms", "tflops", "gbps",
                 "compile_s", "bench_s", *RESOURCE_COLUMNS, *ROOFLINE_COLUMNS, "trial", "chosen_by", "elapsed_s", *TRUST_COLUMNS, "device",
                 "cached"]  # fmt: skip
        names += list(PROVENANCE_COLUMNS)
        records = [
            {
                **{name: row.config.get(name) for name in self.swept},
                **{name: getattr(row, name) for name in names},
                "status": row.status.value,
            }
            for row in self.ordered_rows()
        ]
        frame = pd.DataFrame.from_records(records, columns=[*self.swept, *names])
        for name in _FLOAT_COLUMNS:
            frame[name] = frame[name].astype("float64")
        for name in _INT_COLUMNS:
            frame[name] = frame[name].astype("Int64")
        frame["launchable"] = frame["launchable"].astype("boolean")
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
        chosen = self.chosen_cell(table)
        # Config values, parameter and kernel names are user text: the Styler escapes cells and labels,
        # but neither axis names nor the caption, so those are escaped here.
        table = table.rename_axis(index=_escape(table.index.name), columns=_escape(table.columns.name))
        styler = table.style.highlight_min(axis=None, props=_HIGHLIGHT).format(precision=4, na_rep="—", escape="html")
        styler = styler.format_index(escape="html", axis=0).format_index(escape="html", axis=1)
        caption = f"{self.kernel_name}: {values} (minimum highlighted)"
        if chosen is not None and table.loc[chosen] != table.min(axis=None):
            styler = styler.format("{:.4f} ★", subset=([chosen[0]], [chosen[1]]))
            caption += "; ★ the best config, chosen by the re-benchmark at the end"
        return styler.set_caption(_escape(caption))

    def chosen_cell(self, table: Any) -> tuple[Any, Any] | None:
        """Where a :meth:`pivot_table` holds the best config, as (row, column) labels, when the re-benchmark at the
        end chose it (None without a verdict, or when the table's axes do not place it)."""
        best = self.rebenchmarked_best
        if best is None:
            return None
        cell = (best.config.get(table.index.name), best.config.get(table.columns.name))
        return cell if cell[0] in table.index and cell[1] in table.columns and not math.isnan(table.loc[cell]) else None

    def pivot_table(self, index: str | None = None, columns: str | None = None, values: str = "latency_ms", frame: Any = None):
        """The plain DataFrame behind :meth:`pivot`; ``frame``: the rows of :meth:`to_pandas` to take (default:
        all). Its labels are every value the space has, whichever rows are taken."""
        index, columns = self._axes(index, columns)
        frame = self.to_pandas() if frame is None else frame
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


_NOT_ERRORS = (TuneStatus.OK, TuneStatus.COMPILED, TuneStatus.PRUNED)
# A config over the arch's limits is a fact of its resources, said in its row: nothing to reproduce.
_REPRODUCIBLE_FAILURES = (TuneStatus.COMPILE_ERROR, TuneStatus.RUN_ERROR, TuneStatus.MISMATCH)


def _escape(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _sort_key(value: Any) -> tuple:
    return (0, value, "") if isinstance(value, (int, float)) and not math.isnan(value) else (1, 0, repr(value))

