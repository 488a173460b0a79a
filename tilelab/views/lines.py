"""A line of a source as the tabs quote it beside a number: stripped, and cut to a width with "…"."""

from __future__ import annotations

__all__ = ["quoted_line"]


def quoted_line(lines: list[str], number: int | None, width: int) -> str:
    """Line ``number`` (from 1) of ``lines``, stripped and cut to ``width`` characters; "" where there is none."""
    text = lines[number - 1].strip() if number is not None and 0 < number <= len(lines) else ""
    return f"{text[:width]}…" if len(text) > width else text
