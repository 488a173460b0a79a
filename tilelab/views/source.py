"""The Source tab: device code beside the kernel's Python, linked line to line; host code on a toggle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets

from tilelab.records import KernelRecord, SourceRecord

__all__ = ["SourceWidget", "binary_note", "token_lines"]

_ASSETS = Path(__file__).parent / "assets"


def _lexer(language: str):
    from pygments.lexers import CLexer, CudaLexer, PythonLexer

    return {"python": PythonLexer, "cuda": CudaLexer}.get(language, CLexer)()


def _short_class(token_type: Any) -> str:
    from pygments.token import STANDARD_TYPES

    while token_type not in STANDARD_TYPES:
        token_type = token_type.parent
    return STANDARD_TYPES[token_type]


def token_lines(text: str, language: str) -> list[list[list[str]]]:
    """``text`` highlighted as lines of ``[css_class, text]`` runs (pygments short classes; the browser uses textContent)."""
    lines: list[list[list[str]]] = [[]]
    for token_type, value in _lexer(language).get_tokens(text):
        css = _short_class(token_type)
        for k, part in enumerate(value.split("\n")):
            if k:
                lines.append([])
            if not part:
                continue
            line = lines[-1]
            if line and line[-1][0] == css:
                line[-1][1] += part
            else:
                line.append([css, part])
    count = len(text.splitlines()) or 1
    return lines[:count]


def binary_note(record: KernelRecord) -> str:
    """Why PTX/SASS, registers and spills are (not) shown for ``record``."""
    if record.source is None:
        return "PTX / SASS, registers and spills: not available — the compile stopped before code generation."
    if record.lowered_only:
        return (
            "PTX / SASS, registers and spills: not available — this kernel was lowered only "
            "(no GPU / nvcc here), so no binary exists."
        )
    return "PTX / SASS, registers and spills: not available — this record carries no nvcc / cuobjdump output."


def kernel_links(source: SourceRecord) -> list[list[int]]:
    """``[device_line, python_line]`` pairs for lines of the kernel's own file."""
    return [[link.output_line, link.line] for link in source.line_links if link.file == source.kernel_file]


class SourceWidget(anywidget.AnyWidget):
    """Device source beside the kernel's Python; the texts are sent on request, never synced.

    ``selected_line`` is a line of the kernel's Python; the browser highlights
    it and the device lines linked to it (and selecting a device line selects
    its Python line).
    """

    _esm = _ASSETS / "source.js"
    _css = _ASSETS / "tilelab.css"

    kernel_file = traitlets.Unicode("").tag(sync=True)
    language = traitlets.Unicode("cuda").tag(sync=True)
    has_host = traitlets.Bool(False).tag(sync=True)
    show_host = traitlets.Bool(False).tag(sync=True)
    selected_line = traitlets.Int(-1).tag(sync=True)
    note = traitlets.Unicode("").tag(sync=True)

    def __init__(self, record: KernelRecord, **kwargs: Any) -> None:
        source = record.source
        super().__init__(
            kernel_file=source.kernel_file if source else "",
            language=source.language if source else "cuda",
            has_host=bool(source and source.host),
            note=binary_note(record),
            **kwargs,
        )
        self._source = source
        self.on_msg(self._on_message)

    def linked_lines(self, line: int | None = None) -> list[int]:
        """Device lines generated from Python ``line`` (default: the selected one)."""
        if self._source is None:
            return []
        return self._source.cuda_lines_for(self.selected_line if line is None else line)

    def payload(self, which: str = "source") -> dict[str, Any]:
        """The message answering a ``fetch`` (``which="source"``) or ``fetch_host`` (``which="host"``)."""
        source = self._source
        if source is None:
            return {"type": "source", "python": [], "device": [], "links": []}
        if which == "host":
            return {"type": "host", "host": token_lines(source.host or "", "cuda")}
        return {
            "type": "source",
            "python": token_lines(source.kernel_source, "python"),
            "device": token_lines(source.device, source.language),
            "links": kernel_links(source),
        }

    def _on_message(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        kind = content.get("type")
        if kind == "fetch":
            self.send(self.payload("source"))
        elif kind == "fetch_host":
            self.send(self.payload("host"))

    def __repr__(self) -> str:
        return f"<SourceWidget {self.kernel_file or 'no source'}>"
