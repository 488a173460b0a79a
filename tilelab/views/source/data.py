"""The Source tab's data: the kernel's Python beside its device code, linked line to line both ways.

:func:`source_data` is the only code that shapes the tab's JSON; the static snapshot
(:func:`~tilelab.views.source.snapshot.source_snapshot`) and the TypeScript tab
(``src/widgets/source.ts``) both render that dict. The links are the record's source
map, computed once at capture (:mod:`tilelab.source_map`).
"""

from __future__ import annotations

from typing import Any

from tilelab.records import FoundThrough, KernelRecord
from tilelab.source_map import source_map_of
from tilelab.views.machine.data import machine_state

__all__ = ["HOW", "binary_note", "source_data", "source_host"]

HOW = {
    FoundThrough.DIRECTIVE.value: "TileLang's #line directive",
    FoundThrough.TEMPLATE.value: "its tl:: template calls (TileLang's #line pointed into its own templates)",
    FoundThrough.BLOCK.value: "the block around them",
    FoundThrough.DECLARATION.value: "the buffer declaration",
    FoundThrough.PIPELINE.value: "the pipelined loop's loops and barriers",
    FoundThrough.OPERAND.value: "the buffers they touch (no other op or T.Parallel statement names them all)",
}
_UNLINKED_RIGHT = "TileLang emitted it for the kernel as a whole (set-up, barriers, warp-specialisation branches)."


def binary_note(record: KernelRecord) -> str:
    """Where ``record``'s PTX / SASS, registers and spills are: under Machine code, or why there are none (yet)."""
    state, why = machine_state(record)
    if state == "ready":
        return "PTX / SASS, registers and spills: see Machine code."
    if state == "pending":
        return (
            "PTX / SASS, registers and spills: not built yet when this was shown (TileLab builds them with nvcc in "
            "the background for Machine code)."
        )
    return why


def _file_title(kernel_file: str) -> str:
    """The kernel's file as a reader knows it: a ``%%tilelang`` cell is "this cell"."""
    return "this cell" if kernel_file.startswith("<tilelang-cell-") else kernel_file


def source_data(record: KernelRecord) -> dict[str, Any]:
    """The Source tab as plain JSON: the cell and the device code as two panes, and their links.

    ``links`` are ``[cuda line, cell line, how]`` in CUDA order (``how`` keys ``HOW``); ``ops``
    names the cell's tile ops by line and ``unlinked`` says why an op has no CUDA line; ``words``
    name a line of each side ("C line" for a CPU kernel). Without source there are no panes, and
    ``binary_note`` is the snapshot's note.
    """
    source = record.source
    if source is None:
        return {
            "panes": [],
            "links": [],
            "note": "No generated source: the compile stopped before code generation.",
            "binary_note": binary_note(record),
        }
    source_map = source_map_of(source)
    linked = {link.cell_line for link in source_map.links}
    return {
        "panes": [
            {"title": f"Python — {_file_title(source.kernel_file)}", "language": "python", "text": source.kernel_source},
            {"title": f"Device code ({source.language.upper()})", "language": source.language, "text": source.device},
        ],
        "links": [[link.cuda_line, link.cell_line, link.how.value] for link in source_map.links],
        "how": HOW,
        "ops": {str(op.line): f"T.{op.name}" for op in source_map.ops},
        "unlinked": {
            str(op.line): f"T.{op.name} produced no {source.code_name} line of its own here (fused into the lines around it, "
            "or removed)"
            for op in source_map.ops
            if op.line not in linked
        },
        "unlinked_right": _UNLINKED_RIGHT,
        "words": ["cell line", f"{source.code_name} line"],
        "has_host": bool(source.host),
        "note": binary_note(record),
    }


def source_host(record: KernelRecord) -> dict[str, Any]:
    """The host code as a third pane (long boilerplate: the tab asks for it only when shown)."""
    source = record.source
    return {"title": "Host code", "language": source.language if source else "cuda", "text": (source.host if source else "") or ""}
