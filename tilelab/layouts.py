"""TileLang ``Fragment`` / ``Layout`` objects -> numpy tables, one entry per element.

The layout's index expressions are evaluated once over numpy index grids (the
FFI ``map_forward_thread`` costs ~17 µs per element; this is ~300x faster).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tilelab.records import LayoutKind, LayoutRecord

__all__ = ["MAX_ELEMENTS", "evaluate", "fragment_record", "layout_record", "layouts_of_module"]

MAX_ELEMENTS = 1 << 21  # bigger buffers keep their description but no tables

_BINARY = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "FloorDiv": np.floor_divide,
    "FloorMod": np.mod,
    "Min": np.minimum,
    "Max": np.maximum,
    "EQ": np.equal,
    "NE": np.not_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
    "And": np.logical_and,
    "Or": np.logical_or,
}
_CALLS = {
    "bitwise_xor": np.bitwise_xor,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "shift_left": np.left_shift,
    "shift_right": np.right_shift,
}


def _trunc_div(a, b):
    return np.trunc(np.true_divide(a, b)).astype(np.int64)


def evaluate(expr: Any, env: dict[Any, np.ndarray]) -> np.ndarray:
    """Evaluate a TIR integer expression with ``env`` mapping each ``Var`` to an array."""
    kind = type(expr).__name__
    if kind == "Var" or kind == "SizeVar":
        for var, value in env.items():
            if var.same_as(expr):
                return value
        raise KeyError(f"unbound variable {expr} in layout expression")
    if kind == "IntImm":
        return np.int64(expr.value)
    if kind in _BINARY:
        return _BINARY[kind](evaluate(expr.a, env), evaluate(expr.b, env))
    if kind == "Div":
        return _trunc_div(evaluate(expr.a, env), evaluate(expr.b, env))
    if kind == "Mod":
        a, b = evaluate(expr.a, env), evaluate(expr.b, env)
        return a - _trunc_div(a, b) * b
    if kind == "Not":
        return np.logical_not(evaluate(expr.a, env))
    if kind == "Cast":
        return evaluate(expr.value, env)
    if kind == "Select":
        return np.where(evaluate(expr.condition, env), evaluate(expr.true_value, env), evaluate(expr.false_value, env))
    if kind == "Call":
        op = str(expr.op.name).rsplit(".", 1)[-1]
        if op == "if_then_else":
            cond, a, b = (evaluate(arg, env) for arg in expr.args)
            return np.where(cond, a, b)
        if op in _CALLS:
            a, b = (np.asarray(evaluate(arg, env), dtype=np.int64) for arg in expr.args)
            return _CALLS[op](a, b)
    raise NotImplementedError(f"layout expression node {kind} ({expr}) is not supported")


def _free_vars(expr: Any) -> list[Any]:
    from tvm import tirx

    found: list[Any] = []

    def visit(node: Any) -> None:
        if isinstance(node, tirx.Var) and not any(node.same_as(v) for v in found):
            found.append(node)

    tirx.stmt_functor.post_order_visit(expr, visit)
    return found


def _grids(shape: tuple[int, ...], leading: int = 1) -> list[np.ndarray]:
    return list(np.indices((leading, *shape), dtype=np.int64))


def _fragment_tables(fragment: Any, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, int]:
    variables = [getattr(v, "var", v) for v in fragment.get_forward_vars()]
    replicas = int(fragment.replicate_size)
    grids = _grids(shape, replicas)
    if len(variables) == len(shape) + 1:  # a replicated fragment's first variable is the replica
        env = dict(zip(variables, grids, strict=True))
    else:
        env = dict(zip(variables, grids[1:], strict=True))
    thread_expr = fragment.thread
    extra = [v for v in _free_vars(thread_expr) if not any(v.same_as(u) for u in env)]
    if len(extra) > 1:
        raise NotImplementedError(f"fragment thread expression has several free variables: {extra}")
    if extra:
        env[extra[0]] = grids[0]
    full = grids[0].shape
    thread = np.broadcast_to(evaluate(thread_expr, env), full).astype(np.int32)
    index_exprs = list(fragment.index)
    local = np.zeros(full, dtype=np.int64)
    for expr, extent in zip(index_exprs, [int(s) for s in fragment.get_output_shape()], strict=True):
        local = local * extent + np.broadcast_to(evaluate(expr, env), full)
    return thread, local.astype(np.int32), replicas


def layout_record(buffer: Any, layout: Any) -> LayoutRecord:
    """One buffer's inferred layout as a record (tables when small enough)."""
    shape = tuple(int(s) for s in buffer.shape)
    scope = str(buffer.scope())
    description = str(layout).strip()
    common = {"buffer": str(buffer.name), "scope": scope, "shape": shape, "dtype": str(buffer.dtype), "description": description}
    too_big = int(np.prod(shape)) > MAX_ELEMENTS
    if type(layout).__name__ == "Fragment":
        threads = int(layout.get_thread_size())
        if too_big:
            return LayoutRecord(kind=LayoutKind.FRAGMENT, threads=threads, **common)
        thread, local, replicas = _fragment_tables(layout, shape)
        return LayoutRecord(
            kind=LayoutKind.FRAGMENT, threads=threads, replicas=replicas, thread=thread, local_index=local, **common
        )
    kind = LayoutKind.SHARED if scope.startswith("shared") else LayoutKind.OTHER
    if too_big:
        return LayoutRecord(kind=kind, **common)
    variables = [getattr(v, "var", v) for v in layout.get_forward_vars()]
    env = dict(zip(variables, _grids(shape)[1:], strict=True))
    offset = np.broadcast_to(evaluate(layout.get_linearized_forward_index(), env), (1, *shape))[0]
    return LayoutRecord(kind=kind, offset=offset.astype(np.int64), **common)


def fragment_record(fragment: Any, name: str = "fragment", dtype: str = "float32") -> LayoutRecord:
    """A bare ``Fragment`` (no buffer: e.g. one built with ``tilelang.layout.Fragment``) as a record.

    Parameters
    ----------
    fragment
        A ``tilelang.layout.Fragment``; its input shape is the tile's shape.
    name
        The name shown in place of a buffer's.
    dtype
        The element type the tables are labelled with (a fragment has none of its own).
    """
    shape = tuple(int(s) for s in fragment.get_input_shape())
    if int(np.prod(shape)) > MAX_ELEMENTS:
        raise ValueError(f"fragment {name!r} has {int(np.prod(shape))} elements; at most {MAX_ELEMENTS} are tabulated")
    thread, local, replicas = _fragment_tables(fragment, shape)
    return LayoutRecord(
        buffer=name,
        scope="local.fragment",
        shape=shape,
        dtype=dtype,
        kind=LayoutKind.FRAGMENT,
        description=str(fragment).strip(),
        threads=int(fragment.get_thread_size()),
        replicas=replicas,
        thread=thread,
        local_index=local,
    )


def layouts_of_module(mod: Any, warnings: list[str] | None = None) -> dict[str, LayoutRecord]:
    """Every buffer layout annotated by ``tl.LayoutInference`` in ``mod``.

    A layout that cannot be tabulated is skipped with a line in ``warnings``.
    """
    from tvm import tirx

    found: dict[str, LayoutRecord] = {}

    def visit(node: Any) -> None:
        annotations = getattr(node, "annotations", None)
        if annotations is None or not hasattr(node, "alloc_buffers") or "layout_map" not in annotations:
            return
        for buffer, layout in annotations["layout_map"].items():
            if str(buffer.name) in found:
                continue
            try:
                found[str(buffer.name)] = layout_record(buffer, layout)
            except (NotImplementedError, KeyError, ValueError) as exc:
                if warnings is not None:
                    warnings.append(f"layout of {buffer.name} not tabulated: {exc}")

    for _, func in mod.functions.items():
        if isinstance(func, tirx.PrimFunc):
            tirx.stmt_functor.post_order_visit(func.body, visit)
    return found
