"""TileLang ``Fragment`` / ``Layout`` objects -> numpy tables, one entry per element.

The layout's index expressions are evaluated once over numpy index grids (the
FFI ``map_forward_thread`` costs ~17 µs per element; this is ~300x faster).
"""

from __future__ import annotations

from dataclasses import replace
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


def _thread_start(fragment: Any) -> int:
    """The ``threadIdx.x`` of the fragment's thread 0 (a Hopper consumer's fragment starts after the producer's)."""
    thread_range = getattr(fragment, "thread_range", None)
    start = getattr(thread_range, "min", None)
    return int(start) if start is not None and type(start).__name__ == "IntImm" else 0


def _is_fragment(layout: Any) -> bool:
    from tilelang.layout import Fragment

    return isinstance(layout, Fragment)  # a reducer's PartialFragment too


def layout_record(buffer: Any, layout: Any) -> LayoutRecord:
    """One buffer's inferred layout as a record (tables when small enough)."""
    shape = tuple(int(s) for s in buffer.shape)
    scope = str(buffer.scope())
    description = str(layout).strip()
    common = {"buffer": str(buffer.name), "scope": scope, "shape": shape, "dtype": str(buffer.dtype), "description": description}
    too_big = int(np.prod(shape)) > MAX_ELEMENTS
    if _is_fragment(layout):
        threads = int(layout.get_thread_size())
        if too_big:
            return LayoutRecord(kind=LayoutKind.FRAGMENT, threads=threads, thread_start=_thread_start(layout), **common)
        thread, local, replicas = _fragment_tables(layout, shape)
        return LayoutRecord(
            kind=LayoutKind.FRAGMENT,
            threads=threads,
            replicas=replicas,
            thread=thread,
            local_index=local,
            thread_start=_thread_start(layout),
            **common,
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

    Keys are buffer names; when the program launches several device kernels,
    ``"<kernel>/<buffer>"`` (TileLang's device-kernel names: ``main_kernel``,
    ``main_kernel_1``, ...), so two kernels allocating the same name keep both.
    A layout that cannot be tabulated is skipped with a line in ``warnings``.
    """
    from tvm import tirx

    kernels: list[tuple[str, list[Any], list[Any]]] = []
    for global_var, func in mod.functions.items():
        if isinstance(func, tirx.PrimFunc):
            symbol = str(func.attrs["global_symbol"]) if func.attrs and "global_symbol" in func.attrs else global_var.name_hint
            kernels += [
                (f"{symbol}_kernel" + (f"_{i}" if i else ""), blocks, data)
                for i, (blocks, data) in enumerate(_kernels_with_layouts(func.body))
            ]
    several = len(kernels) > 1
    found: dict[str, LayoutRecord] = {}
    for kernel, blocks, data in kernels:
        for block in blocks:
            for buffer, layout in block.annotations["layout_map"].items():
                if several and not any(buffer.data.same_as(d) for d in data):
                    continue
                key = f"{kernel}/{buffer.name}" if several else str(buffer.name)
                if key in found:
                    continue
                try:
                    found[key] = replace(layout_record(buffer, layout), kernel=kernel)
                except (NotImplementedError, KeyError, ValueError) as exc:
                    if warnings is not None:
                        warnings.append(f"layout of {key} not tabulated: {exc}")
    return found


def _has_layouts(node: Any) -> bool:
    annotations = getattr(node, "annotations", None)
    return annotations is not None and hasattr(node, "alloc_buffers") and "layout_map" in annotations


def _kernels_with_layouts(body: Any) -> list[tuple[list[Any], list[Any]]]:
    """Per device kernel (``T.Kernel`` launch): its blocks carrying a ``layout_map``, and the buffer data it touches.

    At ``tl.LayoutInference`` every kernel's root block carries the whole
    program's map (two kernels' ``acc`` are both named ``acc``), so a kernel's
    own buffers are those whose data its body reads or writes.
    """
    from tvm import tirx

    kernels: list[tuple[list[Any], list[Any]]] = []

    def collect(stmt: Any) -> tuple[list[Any], list[Any]]:
        blocks: list[Any] = []
        data: list[Any] = []

        def visit(node: Any) -> None:
            if _has_layouts(node):
                blocks.append(node)
            buffer = getattr(node, "buffer", None)
            if buffer is not None and hasattr(buffer, "data") and not any(buffer.data.same_as(d) for d in data):
                data.append(buffer.data)

        tirx.stmt_functor.post_order_visit(stmt, visit)
        return blocks, data

    def launch(node: Any) -> bool:
        is_launch = (
            isinstance(node, tirx.AttrStmt)
            and node.attr_key == "thread_extent"
            and str(getattr(node.node, "thread_tag", "")).startswith("blockIdx")
        )
        if not is_launch:
            return True
        kernels.append(collect(node.body))
        return False  # the launches nested inside (blockIdx.y, .z) belong to this kernel

    tirx.stmt_functor.pre_order_visit(body, launch)
    if not kernels:  # no GPU launch (a CPU kernel): one kernel, every buffer its own
        blocks, _ = collect(body)
        kernels.append((blocks, []))
    return [(blocks, data) for blocks, data in kernels if blocks]
