"""What a run notebook's outputs must show: no error, and without a GPU a "skipped" line from each cell tagged ``gpu``.

Cells tagged ``gpu`` need a GPU to run a kernel; without one they must say so with a printed "skipped" line
(never pass silently, never raise).
"""

from __future__ import annotations


def stdout_of(cell) -> str:
    return "".join(out.get("text", "") for out in cell.get("outputs", []) if out.get("output_type") == "stream")


def error_outputs(notebook) -> list[str]:
    """``cell N: Name: message`` for each error output of ``notebook`` (an nbformat notebook)."""
    return [
        f"cell {index}: {out.get('ename')}: {out.get('evalue')}"
        for index, cell in enumerate(notebook.cells)
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]


def silent_gpu_cells(notebook) -> list[int]:
    """The indices of cells tagged ``gpu`` that printed no "skipped" line (what a run without a GPU must print)."""
    return [
        index
        for index, cell in enumerate(notebook.cells)
        if "gpu" in cell.metadata.get("tags", []) and "skipped" not in stdout_of(cell).lower()
    ]
