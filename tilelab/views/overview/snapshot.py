"""The Overview tab's snapshot, drawn from :func:`~tilelab.views.overview.data.overview_data` alone: the error of a
failed compile (its line marked for the live view to link into the cell), then the facts as a table."""

from __future__ import annotations

from typing import Any

from tilelab.views.html import ERROR_BACKGROUND, ERROR_COLOUR, MONO, details, escape, table

__all__ = ["overview_snapshot"]

_SPANS = {
    "error": f"<span style='color:{ERROR_COLOUR};font-weight:600'>{{}}</span>",
    "warning": "<span style='color:var(--jp-warn-color1,#9a6700)'>{}</span>",
    "provenance": "<span data-tilelab='provenance'>{}</span>",
}


def _value(row: dict[str, str]) -> str:
    text = _SPANS[row["kind"]].format(escape(row["text"])) if row["kind"] else escape(row["text"])
    return text + (f" <span style='color:var(--jp-ui-font-color2,#666)'>{escape(row['note'])}</span>" if row["note"] else "")


def _where(error: dict[str, Any]) -> str:
    """`` — this cell, line 17`` (the line is a link the live view follows into the cell's editor), or ``""``."""
    if error["place"] is None:
        return ""
    if error["line"] is None:
        return f" — {escape(error['place'])}"
    line = f"line {error['line']}"
    if error["link"]:
        line = f"<span class='tl-line-link' data-tilelab-line='{int(error['line'])}'>{line}</span>"
    return f" — {escape(error['place'])}, {line}"


def overview_snapshot(data: dict[str, Any]) -> str:
    """The Overview: the error (with its line) of a failed compile, and the facts about the compile."""
    parts = []
    error = data["failure"]
    if error is not None:
        parts.append(
            f"<div data-tilelab='error' style='border-left:4px solid {ERROR_COLOUR};"
            f"background:{ERROR_BACKGROUND};padding:6px 10px;margin:4px 0'>"
            f"<div style='font-weight:600;color:{ERROR_COLOUR}'>{escape(error['title'])}{_where(error)}</div>"
            f"<pre style='{MONO};white-space:pre-wrap;margin:4px 0'>{escape(error['message'])}</pre></div>"
        )
        if error["log"]:
            parts.append(details("full log", f"<pre style='{MONO};white-space:pre-wrap'>{escape(error['log'])}</pre>"))
    rows = [(f"<b>{escape(row['label'])}</b>", _value(row)) for row in data["rows"]]
    parts.append(table(rows, attrs=" data-tilelab='overview'"))
    return "".join(parts)
