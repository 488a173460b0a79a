"""How wide a label is drawn in a chart, and the label cut to fit a width: one rule for every chart's labels.

Widths are DejaVu Sans's (Debian's default UI font, wider than most), each
character rounded up to one of five widths, so a label cut to fit here fits
in narrower fonts too.
"""

from __future__ import annotations

__all__ = ["CHART_FONT_PX", "fit"]

CHART_FONT_PX = 11  # the charts' font size
_NARROW, _SLIM, _WIDE, _WIDEST = " ,.:;'|/\\ijlIJ", "-()[]!frt", "#+<>=^~&w", "%@mMW"


def fit(label: str, room_px: float, font_px: float = CHART_FONT_PX) -> str:
    """``label`` as a chart shows it in ``room_px``: whole where it fits, else cut with an ellipsis."""
    room = room_px / font_px
    if sum(_em(char) for char in label) <= room:
        return label
    room -= _em("…")
    for end, char in enumerate(label):
        room -= _em(char)
        if room < 0:
            return label[:end].rstrip(", ") + "…"
    return label


def _em(char: str) -> float:
    """``char``'s width in em in DejaVu Sans, rounded up to one of five widths (measured with its metrics)."""
    if char in _NARROW:
        return 0.34
    if char in _SLIM:
        return 0.42
    if char in _WIDEST or not char.isascii():
        return 1.0
    if char in _WIDE:
        return 0.84
    return 0.8 if char.isupper() else 0.64
