"""The Tuning tab's colours, chosen once in the data: the snapshot and ``src/widgets/tuning.ts`` paint what the dict says.

Colours that mean something (a bar's count, a row's status, a timeline phase)
are JupyterLab CSS variables with plain fallbacks, so light and dark themes
both read; a heat-map cell's background is a fixed viridis stop, with a text
colour picked for it.
"""

from __future__ import annotations

from tilelab.views.html import ERROR_COLOUR, TRACK

__all__ = ["BAR_COLOURS", "BEST_MARK", "PHASE_COLOURS", "STATUS_COLOURS", "heat_colour"]

_OK, _ERROR = "var(--jp-success-color1,#2da44e)", ERROR_COLOUR
BAR_COLOURS = {"compiled": "var(--jp-brand-color1,#0969da)", "benchmarked": _OK, "failed": _ERROR}
STATUS_COLOURS = {
    "ok": _OK,
    "compile_error": _ERROR,
    "run_error": _ERROR,
    "mismatch": "var(--jp-warn-color1,#bf8700)",
    "timeout": "#8250df",
}
PHASE_COLOURS = {
    "queued": TRACK,
    "compiling": "var(--jp-brand-color1,#0969da)",
    "compiled": "var(--jp-brand-color2,#64b5f6)",
    "waiting": "var(--jp-warn-color2,#e3b341)",
    "checking": "var(--jp-success-color2,#81c784)",
    "benchmarking": "var(--jp-success-color1,#2da44e)",
    "confirming": "var(--jp-error-color2,#e57373)",
    "rebenchmarking": "var(--jp-info-color0,#006064)",
}
BEST_MARK = "#e3116c"  # the outline of the fastest heat-map cell: reads on every viridis stop
# Viridis, reversed (fast = bright): ten stops, interpolated linearly.
_HEAT = ((253, 231, 37), (181, 222, 43), (110, 206, 88), (53, 183, 121), (31, 158, 137),
         (38, 130, 142), (49, 104, 142), (62, 73, 137), (72, 40, 120), (68, 1, 84))  # fmt: skip


def heat_colour(fraction: float) -> tuple[str, str]:
    """Background and text colour of a heat cell at ``fraction`` (0 fastest .. 1 slowest)."""
    position = min(max(fraction, 0.0), 1.0) * (len(_HEAT) - 1)
    low = int(position)
    high, weight = min(low + 1, len(_HEAT) - 1), position - int(position)
    red, green, blue = (round(a + (b - a) * weight) for a, b in zip(_HEAT[low], _HEAT[high], strict=True))
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    return f"#{red:02x}{green:02x}{blue:02x}", "#111111" if luminance > 140 else "#f6f8fa"
