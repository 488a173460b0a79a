"""The tile ops of a kernel's Python: each ``T.<name>(...)`` statement and tile loop, with the buffers it names.

:mod:`tilelab.source_map` matches the generated CUDA to these, by family (gemm, copy, reduce, fill ...) and by buffer.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["BodyStatement", "CellOp", "cell_ops"]

_FAMILY_OF_OP = {
    "gemm": "gemm", "gemm_v1": "gemm", "gemm_v2": "gemm", "wgmma_gemm": "gemm", "gemm_sp": "gemm", "tcgen05_gemm": "gemm",
    "copy": "copy", "c2d_im2col": "copy", "async_copy": "copy", "tma_copy": "copy", "transpose": "copy",
    "reduce_max": "reduce", "reduce_min": "reduce", "reduce_sum": "reduce", "reduce_abssum": "reduce",
    "reduce_absmax": "reduce", "reduce_abs_max": "reduce", "reduce": "reduce", "cumsum": "reduce",
    "finalize_reducer": "reduce",
    "fill": "fill", "clear": "fill", "reducer_init": "fill",
    "atomic_add": "atomic", "atomic_max": "atomic", "atomic_min": "atomic",
}  # fmt: skip
_LOOPS = {"Pipelined", "serial", "unroll", "Persistent", "vectorized"}  # loops kept as CUDA loops (not T.Parallel)
_ALLOCS = re.compile(r"^alloc_\w+$")


@dataclass(frozen=True)
class BodyStatement:
    """A statement of a ``T.Parallel`` loop's body, in its ``if`` branches too (not in a loop nested in it)."""

    line: int
    names: frozenset[str]  # every name it uses
    targets: frozenset[str]  # the names it stores into


@dataclass(frozen=True)
class CellOp:
    """A tile-op statement of the kernel's Python: ``T.<name>(...)`` at ``line``, or a ``for`` over a tile loop."""

    line: int
    name: str  # "gemm", "copy", "reduce_max", "Pipelined", "alloc_shared", ...
    buffers: tuple[str, ...]  # the names its arguments start with (loops: none)
    end: int  # last line of its statement (loops: of their body)
    statements: tuple[BodyStatement, ...] = ()  # a T.Parallel loop's: the statements of its body

    @property
    def family(self) -> str:
        if self.name in _LOOPS:
            return "loop"
        if _ALLOCS.match(self.name):
            return "alloc"
        return _FAMILY_OF_OP.get(self.name, "other")


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _tile_call(node: ast.AST) -> str | None:
    """``name`` for a call ``T.name(...)`` (any ``<module>.name`` of a tile language alias), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        return node.func.attr
    return None


def _body_statements(body: list[ast.stmt]) -> tuple[BodyStatement, ...]:
    found: list[BodyStatement] = []
    for node in body:
        if isinstance(node, ast.If):
            found += _body_statements(node.body) + _body_statements(node.orelse)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
            names = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
            stored = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            targets = frozenset(name for target in stored if target is not None and (name := _root_name(target)))
            found.append(BodyStatement(node.lineno, names, targets))
    return tuple(found)


def cell_ops(text: str, near: set[int]) -> dict[int, CellOp]:
    """The tile ops of the innermost function of ``text`` holding most of the lines in ``near``."""
    # IPython-only lines (magics, shell escapes) would stop ast: blank them, keeping line numbers.
    cleaned = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines())
    try:
        tree = ast.parse(cleaned)
    except SyntaxError:
        return {}
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    best = max(
        functions,
        key=lambda f: (sum(f.lineno <= line <= (f.end_lineno or f.lineno) for line in near), -(f.end_lineno or 0) + f.lineno),
        default=None,
    )
    if best is None:
        return {}
    ops: dict[int, CellOp] = {}
    for node in ast.walk(best):
        if isinstance(node, ast.For) and (name := _tile_call(node.iter)):
            statements = _body_statements(node.body) if name == "Parallel" else ()
            ops[node.lineno] = CellOp(node.lineno, name, (), node.end_lineno or node.lineno, statements)
        elif isinstance(node, (ast.Expr, ast.Assign, ast.AnnAssign)) and (name := _tile_call(node.value)):
            call = node.value
            buffers = [_root_name(arg) for arg in call.args] + [_root_name(k.value) for k in call.keywords]
            if isinstance(node, ast.Assign) and _ALLOCS.match(name):
                buffers = [_root_name(target) for target in node.targets]
            elif isinstance(node, ast.AnnAssign) and _ALLOCS.match(name):
                buffers = [_root_name(node.target)]
            ops[node.lineno] = CellOp(node.lineno, name, tuple(b for b in buffers if b), node.end_lineno or node.lineno)
    return ops
