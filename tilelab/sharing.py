"""Results that leave the notebook: static HTML snapshots, standalone reports, saved records.

``to_html`` gives any TileLab object's script-free snapshot (the ``text/html``
its view puts in a notebook); ``html_document`` wraps a snapshot into a file a
browser opens on its own; ``load`` reads a record written by
``KernelRecord.save``.
"""

from __future__ import annotations

import html
import json
import os
from typing import Any

from tilelab.records import KernelRecord
from tilelab.views import view_for

__all__ = ["MAX_RECORD_BYTES", "html_document", "load", "to_html"]

MAX_RECORD_BYTES = 256 * 2**20  # saved records are a few MB; past this a file is refused unread

_PAGE_CSS = (
    "body{margin:16px 24px;color:#1f2328;background:#fff;"
    "font-family:system-ui,-apple-system,Segoe UI,sans-serif;font-size:13px}"
    "table{border-collapse:collapse}pre{white-space:pre}summary{outline:none}"
)


def to_html(obj: Any) -> str:
    """The static, script-free HTML snapshot of ``obj``.

    Parameters
    ----------
    obj
        A :class:`~tilelab.records.KernelRecord` (its Explorer), a tuning result,
        any TileLab view (``tilelab.compare(a, b)``, ...), or any object with an
        HTML representation; anything else is shown as its escaped ``repr``.
    """
    view = view_for(obj)
    if view is not None:
        return view.to_html()
    snapshot = getattr(obj, "to_html", None)
    if callable(snapshot):
        return str(snapshot())
    rich = getattr(obj, "_repr_html_", None)
    text = rich() if callable(rich) else None
    return text if isinstance(text, str) else f"<pre>{html.escape(repr(obj))}</pre>"


def html_document(body: str, title: str) -> str:
    """``body`` (a snapshot) as a complete HTML page with its CSS inline; ``title`` is escaped."""
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{_PAGE_CSS}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )


def load(path: Any):
    """The :class:`~tilelab.records.KernelRecord` saved at ``path`` by ``record.save(path)``.

    Raises
    ------
    OSError
        When the file cannot be read.
    ValueError
        When the file is not a saved record (or a record format this TileLab cannot read),
        or holds more than :data:`MAX_RECORD_BYTES` (256 MB).
    """

    text = _read_capped(path)
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{path} is not a saved TileLab record (JSON nested too deeply to read)") from None
    if not (isinstance(payload, dict) and "format" in payload and "record" in payload):
        raise ValueError(f"{path} is not a saved TileLab record (no 'format' and 'record' keys)")
    try:
        return KernelRecord.from_json(text)
    except ValueError as exc:  # an unsupported format version
        raise ValueError(f"{path}: {exc}") from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path} is not a saved TileLab record (missing or unexpected {exc})") from None
    except RecursionError:
        raise ValueError(f"{path} is not a saved TileLab record (nested too deeply to read)") from None


def _read_capped(path: Any) -> str:
    """The text of ``path``, refused past :data:`MAX_RECORD_BYTES` (a device or a huge file is no record)."""
    limit = f"{MAX_RECORD_BYTES // 2**20} MB"
    with open(path, "rb") as file:
        if os.fstat(file.fileno()).st_size > MAX_RECORD_BYTES:  # a regular file: refused before reading it
            raise ValueError(f"{path} is larger than {limit}, the most a saved record may be")
        data = file.read(MAX_RECORD_BYTES + 1)  # /dev/zero, a pipe: their size says nothing
    if len(data) > MAX_RECORD_BYTES:
        raise ValueError(f"{path} holds more than {limit}, the most a saved record may be")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not JSON ({exc})") from None
