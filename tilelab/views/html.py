"""Static HTML snapshots: self-contained, script-free, inline CSS only, every user string escaped.

They are the ``text/html`` of each view's mime bundle, so a notebook stays
readable after nbconvert, on GitHub, in VS Code and with no kernel. Sections
are ``<details>`` blocks; pictures are inline SVG or coloured tables.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from tilelab.machine.record import machine_warnings
from tilelab.records import KernelRecord

__all__ = [
    "MONO",
    "color_of",
    "details",
    "escape",
    "overview_html",
    "overview_rows",
    "plotly_text",
    "table",
]

MONO = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px"
BOX = "font-family:system-ui,-apple-system,Segoe UI,sans-serif;font-size:13px;line-height:1.4"
# Translucent: a diff reads on a light page, in JupyterLab Dark and in a reopened notebook's snapshot.
_ADD, _DEL = "background:rgba(46,160,67,0.15)", "background:rgba(248,81,73,0.15)"
_ADD_WORD, _DEL_WORD = "background:rgba(46,160,67,0.4)", "background:rgba(248,81,73,0.4)"


def escape(value: Any) -> str:
    """``value`` as text safe inside HTML elements and quoted attributes."""
    return html.escape(str(value), quote=True)


def plotly_text(value: Any) -> str:
    """``value`` as plotly label or title text: plotly reads those as a subset of HTML (and decodes no ``&quot;``)."""
    return html.escape(str(value), quote=False)


def color_of(value: int) -> str:
    """A categorical colour for integer ``value`` (golden-angle hues: neighbours differ)."""
    return f"hsl({(int(value) * 137.508) % 360:.0f},70%,62%)"


def details(summary: str, body: str, open_: bool = False, attrs: str = "") -> str:
    """A ``<details>`` section; ``summary`` is escaped, ``body`` is trusted markup."""
    flag = " open" if open_ else ""
    return (
        f"<details{flag}{attrs} style='margin:6px 0'><summary style='cursor:pointer;font-weight:600'>"
        f"{escape(summary)}</summary><div style='margin:4px 0 4px 12px'>{body}</div></details>"
    )


def table(rows: Iterable[Sequence[str]], header: Sequence[str] = (), attrs: str = "") -> str:
    """A table of already-rendered cells (escape user text before passing it)."""
    cell = "padding:1px 8px;text-align:left;vertical-align:top;border-bottom:1px solid var(--jp-border-color2,#eee)"
    head = "".join(f"<th style='{cell}'>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='{cell}'>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table{attrs} style='border-collapse:collapse'>{f'<thead><tr>{head}</tr></thead>' if head else ''}<tbody>{body}</tbody></table>"


def _dims(values: Sequence[int]) -> str:
    return " × ".join(str(v) for v in values)


def overview_rows(record: KernelRecord) -> list[tuple[str, str]]:
    """(label, escaped value) rows of the Overview."""
    rows = [
        ("kernel", escape(record.name)),
        ("target", f"{escape(record.arch)} <span style='color:var(--jp-ui-font-color2,#666)'>{escape(record.target)}</span>"),
    ]
    state = (
        "failed"
        if not record.ok
        else ("lowered only (no GPU: not runnable here)" if record.lowered_only else "compiled")
    )
    rows.append(("status", escape(state)))
    for launch in record.launches:
        label = f"launch {launch.kernel}" if len(record.launches) > 1 and launch.kernel else "launch"
        rows.append(
            (
                label,
                escape(
                    f"grid {_dims(launch.grid)}, {launch.threads} threads ({_dims(launch.block)}), {launch.dynamic_shared_bytes} B dynamic shared memory"
                ),
            )
        )
    for problem in record.launch_problems:
        rows.append(("cannot launch", f"<span style='color:var(--jp-error-color1,#cf222e);font-weight:600'>{escape(problem)}</span>"))
    rows += _machine_rows(record)
    rows += _estimate_rows(record)
    timing = record.timings
    rows.append(
        (
            "timings",
            escape(
                f"elaborate {timing.elaborate_s:.3f} s, lower {timing.lower_s:.3f} s, compile {timing.compile_s:.3f} s (total {timing.total_s:.3f} s)"
            ),
        )
    )
    changed = sum(1 for p in record.passes if p.changed)
    rows.append(("passes", escape(f"{len(record.passes)} ({changed} changed the IR)")))
    rows.append(("cache", _cache_text(record)))
    if record.arguments:
        rows.append(("arguments", escape(", ".join(f"{k}={v}" for k, v in record.arguments.items()))))
    if record.device_name:
        rows.append(("device", escape(record.device_name)))
    rows.append(("tilelang", escape(record.tilelang_version)))
    for warning in record.warnings:
        rows.append(("warning", f"<span style='color:var(--jp-warn-color1,#9a6700)'>{escape(warning)}</span>"))
    return rows


def _cache_text(record: KernelRecord) -> str:
    """Who served the compile and TileLang's key's components, in one escaped line (records older than format 5: a hit or a miss)."""
    if record.provenance is not None:
        return f"<span data-tilelab='provenance'>{escape(record.provenance.text())}</span>"
    return "hit: no passes ran for this display" if record.from_cache else "miss: compiled now"


def _machine_rows(record: KernelRecord) -> list[tuple[str, str]]:
    """Registers, spills and occupancy per device kernel, and the machine code's warnings."""
    machine = record.machine_code
    if machine is None:
        return []
    rows = []
    for name, resources in machine.resources.items():
        occupancy = machine.occupancy.get(name)
        occupied = f", occupancy {occupancy.occupancy:.0%} ({occupancy.limited_by}-limited)" if occupancy else ""
        rows.append(
            (
                "resources" if len(machine.resources) == 1 else f"resources {name}",
                escape(
                    f"{resources.registers} registers/thread, {resources.spills} B spilled, "
                    f"{resources.total_shared_bytes} B shared/block{occupied}"
                ),
            )
        )
    rows += [("warning", f"<span style='color:var(--jp-warn-color1,#9a6700)'>{escape(text)}</span>") for text in machine_warnings(machine)]
    return rows


def _estimate_rows(record: KernelRecord) -> list[tuple[str, str]]:
    """The static roofline estimate (tilelang's Analyzer), and the percent of it a measured latency reaches."""
    estimate = record.estimate
    if estimate is None:
        return [("static estimate", escape(f"not available: {record.estimate_note}"))] if record.estimate_note else []
    rows = [("static estimate", escape(f"{estimate.text()} ({estimate.peaks_source})"))]
    percent = record.percent_of_roofline
    if percent is not None:
        rows.append(("% of roofline", escape(f"{percent:.0f}% (measured {record.latency_ms:.4g} ms)")))
    return rows


def overview_html(record: KernelRecord) -> str:
    """The Overview: facts about the compile, and the error (with its line) for a failed one."""
    parts = []
    if record.error is not None:
        error = record.error
        parts.append(
            "<div data-tilelab='error' style='border-left:4px solid var(--jp-error-color1,#cf222e);"
            "background:var(--jp-rendermime-error-background,#fff5f5);padding:6px 10px;margin:4px 0'>"
            f"<div style='font-weight:600;color:var(--jp-error-color1,#cf222e)'>{escape(error.kind)} error{_where(error)}</div>"
            f"<pre style='{MONO};white-space:pre-wrap;margin:4px 0'>{escape(error.message)}</pre></div>"
        )
        if error.log:
            parts.append(details("full log", f"<pre style='{MONO};white-space:pre-wrap'>{escape(error.log)}</pre>"))
    parts.append(
        table([(f"<b>{escape(k)}</b>", v) for k, v in overview_rows(record)], attrs=" data-tilelab='overview'")
    )
    return "".join(parts)




def _where(error: Any) -> str:
    """`` — this cell, line 17`` (the line is a link the live view follows into the cell's editor), or ``""``."""
    in_cell = (error.file or "").startswith("<tilelang-cell-")
    place = "this cell" if in_cell or not error.file else escape(error.file)
    if error.line is None:
        return "" if in_cell or not error.file else f" — {place}"
    line = f"line {error.line}"
    if in_cell:  # the live Explorer turns this into a link to the line in the cell's editor
        line = f"<span class='tl-line-link' data-tilelab-line='{int(error.line)}'>{line}</span>"
    return f" — {place}, {line}"
