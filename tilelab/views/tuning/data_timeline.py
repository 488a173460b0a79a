"""The ``timeline`` part of the Tuning tab's data: a sweep's phases laid out as a Gantt chart, in pixels.

One row per config in the order the sweep took them (the first
:data:`TIMELINE_ROWS`), one bar per phase. The geometry (bar boxes, tick
positions and labels, row labels cut to fit), the colours and every tooltip
are decided here, once: ``snapshot_timeline.py`` and ``src/widgets/tuning_timeline.ts``
only draw them.
"""

from __future__ import annotations

import math
from typing import Any

from tilelab.tune.timeline import PHASES
from tilelab.views.text_width import fit
from tilelab.views.tuning.colours import PHASE_COLOURS

__all__ = ["TIMELINE_ROWS", "timeline_data"]

TIMELINE_ROWS = 80
_LABEL_CHARS = 200  # a timeline row's label as its tooltip says it
_WIDTH, _LABEL, _ROW, _GAP, _AXIS = 760, 220, 10, 3, 18  # px: chart, label column, bar, gap between bars, tick band


def timeline_data(result: Any, limit: int = TIMELINE_ROWS) -> dict[str, Any] | None:
    """The chart of ``result``'s first ``limit`` configs (None before any phase was recorded).

    ``width``/``height`` of the chart; ``ticks`` (``x``, ``text``) with the axis band's
    ``tick_top`` and ``tick_text_y``; ``rows`` (``text`` at ``label_x``, ``y``, the full
    ``label``, the row's box from ``top``, ``height`` high); ``bars`` (``phase``, box,
    ``colour``, ``tip``); ``legend``; ``more`` says how many configs were left out.
    """
    record = getattr(result, "timeline_record", None)
    spans = record.all_spans() if record is not None else []
    if not spans:
        return None
    order = list(dict.fromkeys(span.index for span in spans))
    drawn = order[:limit]
    position = {index: row for row, index in enumerate(drawn)}
    labels = {index: _label(result, index) for index in drawn}
    wall = max(max(span.end_s for span in spans), 1e-6)
    scale = (_WIDTH - _LABEL - 10) / wall
    present = {span.phase for span in spans}
    left_out = max(len(order) - limit, 0)
    return {
        "kernel": result.kernel_name,
        "summary": result.timeline_summary(),
        "title": f"timeline of {result.kernel_name}: one row per config, seconds from the tune() call",
        "wall_s": wall,
        "width": _WIDTH,
        "height": _AXIS + len(drawn) * (_ROW + _GAP) + 4,
        "tick_top": _AXIS - 4,
        "tick_text_y": _AXIS - 7,
        "ticks": [{"x": round(_LABEL + tick * scale, 1), "text": f"{tick:g} s"} for tick in _ticks(wall)],
        "label_x": _LABEL - 6,
        "rows": [
            {
                "index": index,
                "label": labels[index],
                "text": fit(labels[index], _LABEL - 10),
                "top": _top(position[index]),
                "height": _ROW,
                "y": _top(position[index]) + _ROW - 1,
            }
            for index in drawn
        ],
        "bars": [_bar(span, _top(position[span.index]), scale, labels[span.index]) for span in spans if span.index in position],
        "legend": [{"phase": phase, "colour": PHASE_COLOURS[phase]} for phase in PHASES if phase in present],
        "left_out": left_out,
        "more": f"… {left_out} more configs not drawn (result.timeline() has them all)" if left_out else None,
    }


def _top(row: int) -> int:
    return _AXIS + row * (_ROW + _GAP)


def _bar(span: Any, top: int, scale: float, label: str) -> dict[str, Any]:
    duration = span.end_s - span.start_s
    tip = f"{label}: {span.phase} {duration:.3g} s" + (f" ({span.lane})" if span.lane else "")
    return {
        "phase": span.phase,
        "x": round(_LABEL + span.start_s * scale, 1),
        "y": top,
        "width": round(max(duration * scale, 1.0), 1),
        "height": _ROW,
        "colour": PHASE_COLOURS[span.phase],
        "tip": tip,
    }


def _ticks(wall: float) -> list[float]:
    """Round tick values over [0, wall]: 4 to 8 of them."""
    step = 10 ** math.floor(math.log10(wall / 4))
    for factor in (1, 2, 5, 10):
        if wall / (step * factor) <= 8:
            step *= factor
            break
    return [i * step for i in range(int(wall / step) + 1)]


def _label(result: Any, index: int) -> str:
    configs = result.configs
    config = configs[index] if 0 <= index < len(configs) else {}
    text = ", ".join(f"{k}={v}" for k, v in config.items() if k in result.swept) or f"config {index}"
    return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "…"
