"""The Source tab: the kernel's Python beside its CUDA, linked line to line both ways.

Links come from :mod:`tilelab.views._source_links`, which repairs TileLang's
``#line`` directives (tile ops that expand through TileLang's own templates,
pipeline and barrier code that inherits a wrong line). :class:`SourceData`
answers the live tab's requests; :func:`source_html` is the static snapshot.
"""

from __future__ import annotations

from typing import Any

from tilelab.records import KernelRecord, SourceRecord
from tilelab.views._source_links import SourceLinks, source_links
from tilelab.views.html import MONO, details, escape, table

__all__ = ["HOW", "SourceData", "binary_note", "source_html"]

HOW = {
    "directive": "TileLang's #line directive",
    "template": "its tl:: template calls (TileLang's #line pointed into its own templates)",
    "block": "the block around them",
    "declaration": "the buffer declaration",
    "pipeline": "the pipelined loop's loops and barriers",
}
_TINTS = [f"hsla({(k * 137.508) % 360:.0f},70%,55%,.22)" for k in range(12)]
_PRE = f"{MONO};white-space:pre;overflow:auto;max-height:520px;margin:0"


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


def _file_title(kernel_file: str) -> str:
    """The kernel's file as a reader knows it: a ``%%tilelang`` cell is "this cell"."""
    return "this cell" if kernel_file.startswith("<tilelang-cell-") else kernel_file


def _unlinked_notes(source: SourceRecord, links: SourceLinks) -> dict[int, str]:
    """Why a cell line has no CUDA line, for the tile-op lines and statements that have none."""
    linked = set(links.cuda_to_cell.values())
    notes = {}
    for line, op in links.ops.items():
        if line not in linked:
            notes[line] = f"T.{op.name} produced no CUDA line of its own here (fused into the lines around it, or removed)"
    return notes


class SourceData:
    """Answers the Source tab's requests: both texts with their links, and the host code."""

    def __init__(self, record: KernelRecord) -> None:
        self.record = record
        self.source = record.source
        self._links: SourceLinks | None = None

    @property
    def links(self) -> SourceLinks:
        """The repaired CUDA → cell links (computed on first use)."""
        if self._links is None:
            self._links = source_links(self.source) if self.source else SourceLinks()
        return self._links

    def panes(self, _content: dict[str, Any] | None = None) -> dict[str, Any]:
        """The cell and the device code as two linked panes."""
        source = self.source
        if source is None:
            return {"panes": [], "links": [], "note": "No generated source: the compile stopped before code generation."}
        links = self.links
        return {
            "panes": [
                {"title": f"Python — {_file_title(source.kernel_file)}", "language": "python", "text": source.kernel_source},
                {"title": f"Device code ({source.language.upper()})", "language": source.language, "text": source.device},
            ],
            "links": links.pairs(),
            "how": HOW,
            "ops": {str(line): f"T.{op.name}" for line, op in links.ops.items()},
            "unlinked": {str(line): note for line, note in _unlinked_notes(source, links).items()},
            "unlinked_right": "TileLang emitted it for the kernel as a whole (set-up, barriers, warp-specialisation branches).",
            "has_host": bool(source.host),
            "note": binary_note(self.record),
        }

    def host(self, _content: dict[str, Any] | None = None) -> dict[str, Any]:
        """The host code (long boilerplate, fetched only when asked for)."""
        return {"title": "Host code", "language": "cuda", "text": (self.source.host if self.source else "") or ""}


def _ranges(numbers: list[int]) -> str:
    """``[3, 4, 5, 9]`` as ``"3–5, 9"``."""
    numbers = sorted(set(numbers))
    spans, start, previous = [], numbers[0], numbers[0]
    for number in [*numbers[1:], None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        spans.append(str(start) if start == previous else f"{start}–{previous}")
        if number is not None:
            start = previous = number
    return ", ".join(spans)


def _numbered(text: str, tint: dict[int, str]) -> str:
    """``text`` with line numbers, lines in ``tint`` on their group's colour."""
    lines = text.splitlines()
    width = len(str(len(lines)))
    out = []
    for number, line in enumerate(lines, start=1):
        row = f"{number:>{width}}  {escape(line)}\n"
        out.append(f"<span style='display:block;background:{tint[number]}'>{row}</span>" if number in tint else row)
    return "".join(out)


def source_html(record: KernelRecord) -> str:
    """The cell and the device code side by side, linked lines tinted alike, and the links as a table."""
    source = record.source
    note = f"<p data-tilelab='binary-note' style='color:var(--jp-ui-font-color2,#6e7781)'>{escape(binary_note(record))}</p>"
    if source is None:
        return "<p>No generated source.</p>" + note
    links = source_links(source)
    by_cell: dict[int, list[int]] = {}
    for cuda, cell in sorted(links.cuda_to_cell.items()):
        by_cell.setdefault(cell, []).append(cuda)
    colour = {cell: _TINTS[k % len(_TINTS)] for k, cell in enumerate(sorted(by_cell))}
    cell_tint = dict(colour)
    cuda_tint = {cuda: colour[cell] for cuda, cell in links.cuda_to_cell.items()}
    pane = "flex:1 1 0;min-width:0;border:1px solid rgba(128,128,128,.3)"
    panes = (
        "<div style='display:flex;gap:8px'>"
        f"<div style='{pane}'><div style='font-weight:600;padding:2px 4px'>Python — {escape(_file_title(source.kernel_file))}</div>"
        f"<pre data-tilelab='python' style='{_PRE}'>{_numbered(source.kernel_source, cell_tint)}</pre></div>"
        f"<div style='{pane}'><div style='font-weight:600;padding:2px 4px'>Device code ({escape(source.language.upper())})</div>"
        f"<pre data-tilelab='device' style='{_PRE}'>{_numbered(source.device, cuda_tint)}</pre></div>"
        "</div>"
    )
    python_lines = source.kernel_source.splitlines()
    rows = [
        (
            str(line),
            f"<code>{escape(python_lines[line - 1].strip() if 0 < line <= len(python_lines) else '')}</code>",
            escape(_ranges(cudas)),
        )
        for line, cudas in sorted(by_cell.items())
    ]
    table_html = table(rows, ("cell line", "code", "CUDA lines"), attrs=" data-tilelab='line-links'")
    listed = details(f"line links ({len(rows)} cell lines)", table_html)
    host = "<p style='color:var(--jp-ui-font-color2,#6e7781)'>Host code: in the live view.</p>" if source.host else ""
    return panes + listed + host + note
