"""The Overview tab's data, the only code that shapes it: the compile's facts as label/value rows (launch,
resources and occupancy, the static estimate, timings, passes, who served the compile, warnings) and the error of
a failed compile with the cell line it names.

Every value is plain text; ``kind`` says how a row's value reads: "" plain
(with an optional muted ``note``), "error", "warning", or "provenance" (the
cache line, which tests and the browser find by it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilelab.machine.occupancy import byte_size
from tilelab.machine.record import machine_warnings
from tilelab.records import ErrorRecord, KernelRecord

__all__ = ["overview_data"]


def _row(label: str, text: str, kind: str = "", note: str = "") -> dict[str, str]:
    return {"label": label, "text": text, "kind": kind, "note": note}


def _dims(values: Sequence[int]) -> str:
    return " × ".join(str(v) for v in values)


def _lowered_only(because: str) -> str:
    return f"lowered only ({because}: not runnable here)" if because else "lowered only (not runnable here)"


def _rows(record: KernelRecord) -> list[dict[str, str]]:
    state = "failed" if not record.ok else (_lowered_only(record.lowered_because) if record.lowered_only else "compiled")
    rows = [_row("kernel", record.name), _row("target", record.arch, note=record.target), _row("status", state)]
    rows += _launch_rows(record)
    rows += [_row("cannot launch", problem, "error") for problem in record.launch_problems]
    rows += _machine_rows(record)
    rows += _estimate_rows(record)
    timing = record.timings
    rows.append(
        _row(
            "timings",
            f"elaborate {timing.elaborate_s:.3f} s, lower {timing.lower_s:.3f} s, compile {timing.compile_s:.3f} s "
            f"(total {timing.total_s:.3f} s)",
        )
    )
    changed = sum(1 for p in record.passes if p.changed)
    rows.append(_row("passes", f"{len(record.passes)} ({changed} changed the IR)"))
    rows.append(_cache_row(record))
    if record.arguments:
        rows.append(_row("arguments", ", ".join(f"{k}={v}" for k, v in record.arguments.items())))
    if record.device_name:
        rows.append(_row("device", record.device_name))
    rows.append(_row("tilelang", record.tilelang_version))
    rows += [_row("warning", warning, "warning") for warning in record.warnings]
    return rows


def _launch_rows(record: KernelRecord) -> list[dict[str, str]]:
    """One row per device kernel's launch; a CPU kernel's one row says it has none (records before 2026-11-28 held a
    1×1×1 "launch" for it: TileLang leaves a host function an empty thread extent)."""
    if record.arch == "cpu":
        return [_row("launch", "none: a host function, whose T.Kernel blocks run as a loop in it on the CPU")]
    rows = []
    for launch in record.launches:
        label = f"launch {launch.kernel}" if len(record.launches) > 1 and launch.kernel else "launch"
        text = (
            f"grid {_dims(launch.grid)}, {launch.threads} threads ({_dims(launch.block)}), "
            f"{byte_size(launch.dynamic_shared_bytes)} dynamic shared memory"
        )
        rows.append(_row(label, text))
    return rows


def _cache_row(record: KernelRecord) -> dict[str, str]:
    """Who served the compile and TileLang's key's components (records older than format 5: a hit or a miss)."""
    if record.provenance is not None:
        return _row("cache", record.provenance.text(), "provenance")
    return _row("cache", "hit: no passes ran for this display" if record.from_cache else "miss: compiled now")


def _machine_rows(record: KernelRecord) -> list[dict[str, str]]:
    """Registers, spills and occupancy per device kernel, and the machine code's warnings."""
    machine = record.machine_code
    if machine is None:
        return []
    rows = []
    for name, resources in machine.resources.items():
        occupancy = machine.occupancy.get(name)
        occupied = (
            f", theoretical occupancy {occupancy.occupancy:.1%} (limited by {occupancy.limited_by})" if occupancy else ""
        )
        rows.append(
            _row(
                "resources" if len(machine.resources) == 1 else f"resources {name}",
                f"{resources.registers} registers/thread, {resources.spills} B spilled, "
                f"{byte_size(resources.total_shared_bytes)} shared/block{occupied}",
            )
        )
    return rows + [_row("warning", text, "warning") for text in machine_warnings(machine)]


def _estimate_rows(record: KernelRecord) -> list[dict[str, str]]:
    """The static roofline estimate (tilelang's Analyzer), and the percent of it a measured latency reaches."""
    estimate = record.estimate
    if estimate is None:
        return [_row("static estimate", f"not available: {record.estimate_note}")] if record.estimate_note else []
    rows = [_row("static estimate", f"{estimate.text()} ({estimate.peaks.source})")]
    percent = record.percent_of_roofline
    if percent is not None:
        rows.append(_row("% of roofline", f"{percent:.0f}% (measured {record.latency_ms:.4g} ms)"))
    return rows


def _error(error: ErrorRecord) -> dict[str, Any]:
    """The error's title, where it happened (``place``, and ``line``; ``link``: the line is in the cell, so the live
    view links it to the cell's editor), its message and log."""
    in_cell = (error.file or "").startswith("<tilelang-cell-")
    place = "this cell" if in_cell or not error.file else error.file
    if error.line is None and (in_cell or not error.file):
        place = None
    return {
        "title": f"{error.kind} error",
        "place": place,
        "line": error.line,
        "link": in_cell and error.line is not None,
        "message": error.message,
        "log": error.log or "",
    }


def overview_data(record: KernelRecord) -> dict[str, Any]:
    """The tab's data (the reply to ``overview``): ``rows`` of ``{label, text, kind, note}`` and the ``failure``
    of a failed compile (None otherwise; not ``error``, which in a reply says the request itself failed)."""
    return {"failure": None if record.error is None else _error(record.error), "rows": _rows(record)}
