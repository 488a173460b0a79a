"""Helpers for the tests that each Explorer tab draws its snapshot from its JSON alone, and sends the widget that JSON."""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path
from typing import Any

import tilelab
from tilelab.records import KernelRecord

QUICKSTART = Path(__file__).parent / "data" / "quickstart_gemm.record.json.gz"


def quickstart_record() -> KernelRecord:
    """The quickstart GEMM lowered for sm_90, with its machine code (as saved in tests/data)."""
    with gzip.open(QUICKSTART, "rt") as file:
        return KernelRecord.from_json(file.read())


def as_sent(value: Any) -> Any:
    """``value`` after a trip through JSON (what reaches the browser); raises for anything that is not plain JSON."""
    return json.loads(json.dumps(value, allow_nan=False))


def tilelab_imports(module: str) -> set[str]:
    """The ``tilelab`` modules that ``module`` (a path inside the package, e.g. "views/passes/snapshot.py") imports."""
    tree = ast.parse((Path(tilelab.__file__).parent / module).read_text())
    names = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    names |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return {name for name in names if name.startswith("tilelab")}


def reads_records(module: str) -> bool:
    """Whether ``module`` imports ``tilelab.records`` (a snapshot must draw its tab's JSON, never the record)."""
    return any(name == "tilelab.records" or name.startswith("tilelab.records.") for name in tilelab_imports(module))
