"""Static HTML snapshots: self-contained, script-free, inline CSS only, every user string escaped.

They are the ``text/html`` of each view's mime bundle, so a notebook stays
readable after nbconvert, on GitHub, in VS Code and with no kernel. Sections
are ``<details>`` blocks; pictures are inline SVG or coloured tables.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from tilelab.diffs import diff_lines, line_runs
from tilelab.records import KernelRecord, PassRecord
from tilelab.views._passdata import ir_at, previous_changed

__all__ = [
    "MONO",
    "color_of",
    "compare_html",
    "details",
    "diff_table",
    "escape",
    "explorer_html",
    "overview_html",
    "overview_rows",
    "passes_html",
    "table",
]

MONO = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px"
BOX = "font-family:system-ui,-apple-system,Segoe UI,sans-serif;font-size:13px;line-height:1.4"
MAX_DIFF_LINES = 80  # per pass in a snapshot; the live widget shows everything
_ADD, _DEL = "background:#e6ffec", "background:#ffebe9"
_ADD_WORD, _DEL_WORD = "background:#abf2bc", "background:#ffc0bc"


def escape(value: Any) -> str:
    """``value`` as text safe inside HTML elements and quoted attributes."""
    return html.escape(str(value), quote=True)


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
    cell = "padding:1px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #eee"
    head = "".join(f"<th style='{cell}'>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='{cell}'>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table{attrs} style='border-collapse:collapse'>{f'<thead><tr>{head}</tr></thead>' if head else ''}<tbody>{body}</tbody></table>"


def _dims(values: Sequence[int]) -> str:
    return " × ".join(str(v) for v in values)


def overview_rows(record: KernelRecord) -> list[tuple[str, str]]:
    """(label, escaped value) rows of the Overview."""
    rows = [
        ("kernel", escape(record.name)),
        ("target", f"{escape(record.arch)} <span style='color:#666'>{escape(record.target)}</span>"),
    ]
    state = (
        "failed"
        if not record.ok
        else ("lowered only (no GPU: not runnable here)" if record.lowered_only else "compiled")
    )
    rows.append(("status", escape(state)))
    if record.launch:
        launch = record.launch
        rows.append(
            (
                "launch",
                escape(
                    f"grid {_dims(launch.grid)}, {launch.threads} threads ({_dims(launch.block)}), {launch.dynamic_shared_bytes} B dynamic shared memory"
                ),
            )
        )
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
    rows.append(("cache", "hit: no passes ran for this display" if record.from_cache else "miss: compiled now"))
    if record.arguments:
        rows.append(("arguments", escape(", ".join(f"{k}={v}" for k, v in record.arguments.items()))))
    if record.device_name:
        rows.append(("device", escape(record.device_name)))
    rows.append(("tilelang", escape(record.tilelang_version)))
    for warning in record.warnings:
        rows.append(("warning", f"<span style='color:#9a6700'>{escape(warning)}</span>"))
    return rows


def overview_html(record: KernelRecord) -> str:
    """The Overview: facts about the compile, and the error (with its line) for a failed one."""
    parts = []
    if record.error is not None:
        error = record.error
        where = f"{error.file or 'cell'}, line {error.line}" if error.line is not None else (error.file or "")
        parts.append(
            "<div data-tilelab='error' style='border-left:4px solid #cf222e;background:#fff5f5;padding:6px 10px;margin:4px 0'>"
            f"<div style='font-weight:600;color:#cf222e'>{escape(error.kind)} error{(' — ' + escape(where)) if where else ''}</div>"
            f"<pre style='{MONO};white-space:pre-wrap;margin:4px 0'>{escape(error.message)}</pre></div>"
        )
        if error.log:
            parts.append(details("full log", f"<pre style='{MONO};white-space:pre-wrap'>{escape(error.log)}</pre>"))
    parts.append(
        table([(f"<b>{escape(k)}</b>", v) for k, v in overview_rows(record)], attrs=" data-tilelab='overview'")
    )
    return "".join(parts)


def _runs_html(runs: list[tuple[str, bool]], word_style: str) -> str:
    return "".join(f"<span style='{word_style}'>{escape(t)}</span>" if flagged else escape(t) for t, flagged in runs)


def diff_table(before: str, after: str, max_lines: int | None = MAX_DIFF_LINES) -> str:
    """A unified diff from ``before`` to ``after`` with word-level highlights, cut after ``max_lines`` lines."""
    rows, shown, total = [], 0, 0
    for hunk in diff_lines(before, after):
        total += len(hunk.lines)
        if max_lines is not None and shown >= max_lines:
            continue
        rows.append(
            f"<tr><td colspan='3' style='color:#666;background:#f6f8fa'>@@ -{hunk.old_start} +{hunk.new_start} @@</td></tr>"
        )
        for line, runs in zip(hunk.lines, line_runs(hunk.lines), strict=True):
            if max_lines is not None and shown >= max_lines:
                break
            shown += 1
            style, word = {"+": (_ADD, _ADD_WORD), "-": (_DEL, _DEL_WORD)}.get(line.kind, ("", ""))
            number = line.new_line if line.kind == "+" else line.old_line
            rows.append(
                f"<tr style='{style}'><td style='color:#999'>{number}</td><td>{line.kind}</td>"
                f"<td>{_runs_html(runs, word)}</td></tr>"
            )
    cut = f"<p style='color:#666'>… {total - shown} more diff lines in the live view.</p>" if shown < total else ""
    return f"<table data-tilelab='diff' style='border-collapse:collapse;white-space:pre;{MONO}'>{''.join(rows)}</table>{cut}"


def _time_chart(passes: Sequence[PassRecord]) -> str:
    width, height = 640, 60
    top = max((p.seconds for p in passes), default=0.0) or 1e-9
    bar = width / max(1, len(passes))
    rects = []
    for i, p in enumerate(passes):
        tall = max(1.0, p.seconds / top * (height - 2))
        fill = "#1976d2" if p.changed else "#bbb"
        rects.append(
            f"<rect x='{i * bar:.1f}' y='{height - tall:.1f}' width='{max(1.0, bar - 1):.1f}' height='{tall:.1f}' fill='{fill}'>"
            f"<title>{escape(f'#{p.index} {p.name}: {p.seconds * 1000:.2f} ms')}</title></rect>"
        )
    return f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' viewBox='0 0 {width} {height}'>{''.join(rects)}</svg>"


def passes_html(record: KernelRecord) -> str:
    """The pass list with time bars and marks, a time chart, and the diff of every changed pass."""
    passes = record.passes
    if not passes:
        return "<p>No passes were recorded.</p>"
    top = max(p.seconds for p in passes) or 1e-9
    rows = []
    for p in passes:
        bar = f"<div style='background:#f57c00;height:6px;width:{max(1, round(60 * p.seconds / top))}px'></div>"
        delta = f"+{p.added} −{p.removed}" if p.changed else ""
        rows.append(
            (
                str(p.index),
                "●" if p.changed else "○",
                f"<code>{escape(p.name)}</code>",
                delta,
                f"{p.seconds * 1000:.2f} ms",
                bar,
            )
        )
    sections = []
    for position, p in enumerate(passes):
        base = previous_changed(passes, position)
        if not p.changed or base is None:
            continue
        body = diff_table(ir_at(passes, base), ir_at(passes, position))
        sections.append(details(f"#{p.index} {p.name} (+{p.added} −{p.removed}) vs #{passes[base].index}", body))
    final = details(
        "IR after the last pass",
        f"<pre style='{MONO};white-space:pre;overflow:auto;max-height:480px'>{escape(ir_at(passes, len(passes) - 1))}</pre>",
    )
    listing = table(rows, ("#", "", "pass", "lines", "time", ""), attrs=" data-tilelab='passes'")
    return (
        _time_chart(passes)
        + listing
        + details(f"diffs of the {len(sections)} changed passes", "".join(sections))
        + final
    )


def explorer_html(record: KernelRecord) -> str:
    """The Explorer's static snapshot: Overview, Passes, Source and Layouts as ``<details>`` sections."""
    from tilelab.views._snapshot_parts import layouts_html, source_html

    changed = sum(1 for p in record.passes if p.changed)
    head = f"TileLab Explorer — {record.name} ({record.arch}, {'failed' if not record.ok else record.mode.value})"
    return (
        f"<div class='tilelab-explorer' data-tilelab='explorer' data-record-id='{escape(record.id)}' style='{BOX}'>"
        f"<div style='font-weight:600;font-size:14px'>{escape(head)}</div>"
        + details("Overview", overview_html(record), open_=True, attrs=" data-section='overview'")
        + details(
            f"Passes ({len(record.passes)}, {changed} changed)", passes_html(record), attrs=" data-section='passes'"
        )
        + details("Source", source_html(record), attrs=" data-section='source'")
        + details(f"Layouts ({len(record.layouts)})", layouts_html(record), attrs=" data-section='layouts'")
        + "</div>"
    )


def compare_html(view: Any) -> str:
    """A :class:`~tilelab.views.compare.CompareView` snapshot: aligned passes, passes in only one, one diff."""
    from tilelab.views.compare import _labels, only_in

    label_a, label_b = _labels(view.a, view.b)
    first, second = only_in(view.a, view.b)
    rows = view._rows()
    listing = table(
        [
            (
                escape(na if na is not None else "—"),
                escape(nb if nb is not None else "—"),
                "same IR" if same else "differs",
            )
            for na, _, nb, _, same in rows
        ],
        (label_a, label_b, ""),
        attrs=" data-tilelab='compare-rows'",
    )
    only = table(
        [(escape(label_a), escape(", ".join(first) or "none")), (escape(label_b), escape(", ".join(second) or "none"))],
        ("only in", "passes"),
        attrs=" data-tilelab='only-in'",
    )
    shown = (
        view.selected
        if view.selected >= 0
        else next((r for r in range(len(rows) - 1, -1, -1) if rows[r][1] is not None and rows[r][3] is not None), -1)
    )
    diff = ""
    if shown >= 0:
        left, right = view.pairs[shown]
        ir_a = ir_at(view.a.passes, left) if left is not None else ""
        ir_b = ir_at(view.b.passes, right) if right is not None else ""
        diff = details(
            f"IR after {rows[shown][0] or rows[shown][2]}: {label_a} → {label_b}", diff_table(ir_a, ir_b), open_=True
        )
    head = f"TileLab compare — {label_a} vs {label_b}"
    return (
        f"<div class='tilelab-compare' data-tilelab='compare' style='{BOX}'><div style='font-weight:600'>{escape(head)}</div>"
        + details("passes in only one record", only, open_=True)
        + details(f"aligned passes ({len(rows)})", listing)
        + diff
        + "</div>"
    )
