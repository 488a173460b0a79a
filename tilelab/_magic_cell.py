"""What ``%%tilelang`` knows of a cell: its pseudo-file, its cache key, and what a cache hit restores.

The pseudo-file is registered in ``linecache`` (so ``inspect.getsource`` and TileLang's
parser see the cell, and CUDA ``#line`` directives point back at its lines). The key is a
hash of (cell, arguments, target, tilelang version, the simple globals the cell reads).
"""

from __future__ import annotations

import ast
import hashlib
import linecache
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

from tilelab.capture import describe_arguments
from tilelab.errors import error_record
from tilelab.records import KernelRecord

_SIMPLE = (int, float, str, bool, bytes, type(None))


@dataclass(frozen=True)
class CachedCell:
    """What an unchanged cell shows again without compiling."""

    records: list[KernelRecord]
    compiled: dict[str, Any]  # runnable kernels by name (GPU or CPU targets)
    kernels: dict[str, Any]  # the kernels the cell defined, as it bound them, by name
    bindings: dict[str, Any]  # every name the cell bound, restored on a hit


def compile_cell(cell: str, cell_files: Any, magic_line: str | None = None) -> tuple[Any, str]:
    """The cell's code object, under a pseudo-file that linecache (and TileLang's parser) can read.

    With ``magic_line`` the pseudo-file starts with it, as the editor shows the cell: every line
    number (errors, the Source tab, CUDA ``#line``) is then the editor's. ``cell_files`` (a bounded
    mapping) keeps the newest cells' entries and drops the oldest from linecache.
    """
    head = [] if magic_line is None else [magic_line + "\n"]
    text = "".join(head) + cell
    filename = f"<tilelang-cell-{hashlib.sha256(text.encode()).hexdigest()[:10]}>"
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    cell_files[filename] = None  # the newest cells keep their entry (TileLang reads it on every compile)
    try:
        # The magic line is not Python: a blank line in its place keeps the numbering.
        return compile("\n" * len(head) + cell, filename, "exec", dont_inherit=True), filename  # not our __future__ flags
    except SyntaxError as exc:
        error = error_record(exc, stage="cell", kernel_file=filename)
        raise UsageError(located(error.message, exc.lineno, lines)) from None


def cell_key(cell: str, code: Any, only: str | None, arguments: Any, target: str, namespace: dict[str, Any]) -> str:
    """Cell code, arguments, target, tilelang version and the simple globals the cell reads.

    The code is the cell's syntax tree, not its text: an edit of comments or
    whitespace alone compiles nothing (the previous records are shown again).
    """
    import tilelang

    normalized = ast.dump(ast.parse(cell))
    reads = {name: repr(namespace[name]) for name in sorted(_global_names(code)) if name in namespace and _is_simple(namespace[name])}
    described = _describe_arguments(arguments) if arguments is not None else None
    parts = (normalized, repr((only, described, reads)), target, tilelang.__version__)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def located(message: str, line: int | None, lines: list[str]) -> str:
    """``message`` with the cell line it names quoted under it (unchanged when there is none)."""
    if line is None or not 0 < line <= len(lines):
        return message
    return f"line {line}: {message}\n  {line} | {lines[line - 1].rstrip()}"


def _global_names(code: Any) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _global_names(const)
    return names


def _is_simple(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_is_simple(item) for item in value)
    return isinstance(value, _SIMPLE)


def _describe_arguments(value: Any) -> str:
    if isinstance(value, dict):
        return repr(describe_arguments((), value))
    return repr(describe_arguments(value if isinstance(value, tuple) else (value,), {}))
