"""Facts of an elaborated or lowered module: its device module, launches, and static counts of the tile operators."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tilelab._tilelang.kernels import HOST_TARGETS
from tilelab._tilelang.lowering import Lowered


# -- facts of a lowered module ------------------------------------------------------
def device_module(built: Any) -> Any:
    """The device IRModule of a :class:`Lowered` or a ``JITKernel`` (None when a cache load kept none)."""
    if isinstance(built, Lowered):
        return built.device_mod
    artifact = getattr(built, "artifact", None)
    return getattr(artifact, "device_mod", None)


def _extent(value: Any) -> int | str:
    """A launch extent: an int, or its expression when it depends on a dynamic shape."""
    return int(value) if type(value).__name__ == "IntImm" else str(value)


def launches(device_mod: Any) -> list[dict[str, Any]]:
    """Every device function's launch: name, grid, block and dynamic shared bytes, in symbol order. A CPU target's
    function has none: TileLang leaves it an empty thread extent, and its T.Kernel blocks run as a loop in it."""
    found = []
    for global_var, func in device_mod.functions.items():
        attrs = func.attrs
        if attrs is None or "thread_extent" not in attrs or _runs_on_the_host(attrs):
            continue
        extent = {str(k): _extent(v) for k, v in attrs["thread_extent"].items()}
        name = str(attrs["global_symbol"]) if "global_symbol" in attrs else str(global_var.name_hint)
        found.append(
            {
                "kernel": name,
                "grid": tuple(extent.get(f"blockIdx.{axis}", 1) for axis in "xyz"),
                "block": tuple(extent.get(f"threadIdx.{axis}", 1) for axis in "xyz"),
                "dynamic_shared_bytes": int(attrs["dyn_shared_memory_buf"]) if "dyn_shared_memory_buf" in attrs else 0,
            }
        )
    return sorted(found, key=lambda launch: launch["kernel"])


def _runs_on_the_host(attrs: Any) -> bool:
    return "target" in attrs and str(attrs["target"].kind.name) in HOST_TARGETS


def elaborated_func(built: Any) -> Any:
    """The elaborated PrimFunc behind a :class:`Lowered` or a ``JITKernel`` (None when unknown)."""
    if isinstance(built, Lowered):
        return built.func
    return getattr(built, "prim_func", None)


# -- static counts of the tile operators ------------------------------------------------
@dataclass(frozen=True)
class TileOpCounts:
    """What ``tilelang.tools.Analyzer`` counts in an elaborated PrimFunc, and what it cannot see.

    ``flops`` (2·M·N·K per ``T.gemm``) and ``global_bytes`` (the global side of
    every ``T.copy``, each block loading its own tiles) are ints, or the text of
    an expression when a trip count is not a constant; ``footprint_bytes`` is the
    size of the global buffers those copies touch (TileLab's, not the Analyzer's:
    what must cross memory at least once). What the Analyzer cannot
    see is given beside: it multiplies by blockIdx.x and blockIdx.y only and
    follows one launch per function (``grid_z``, ``launches``); it counts no
    global access outside ``T.copy``, no GEMM other than ``T.gemm``
    (``uncounted_ops``), and a whole byte per element of a sub-byte dtype.
    """

    flops: int | str
    global_bytes: int | str
    footprint_bytes: int | str
    grid_z: tuple[int | str, ...]  # blockIdx.z extent of each launch
    launches: int
    untracked_global_accesses: int
    uncounted_ops: tuple[str, ...] = ()  # GEMM-like tile operators it does not count
    sub_byte_dtypes: tuple[str, ...] = ()  # global buffers' dtypes narrower than a byte
    gemm_dtypes: tuple[str, ...] = ()  # the A-operand dtypes of the counted T.gemm calls


_COUNTED_COPIES = ("tl.copy", "tl.tileop.copy")  # the copies the Analyzer counts
_COUNTED_GEMMS = ("tl.gemm", "tl.tileop.gemm")


def tile_op_counts(func: Any) -> TileOpCounts:
    """Run tilelang's static Analyzer over ``func`` (elaborated, not lowered: it reads ``T.copy`` and ``T.gemm``).

    Raises whatever the Analyzer raises on a function it cannot read.
    """
    from tilelang.tools.Analyzer import Analyzer
    from tvm import DataType, tirx

    analyzer = Analyzer(_with_int64_extents(func), None).ir_pass()  # the device is read only by calculate(), unused
    global_buffers = list(func.buffer_map.values())
    grid_z: list[int | str] = []
    launches, accesses, in_copies, uncounted, operands = 0, [], [], set(), set()

    def visit(node: Any) -> None:
        nonlocal launches
        tag = _thread_tag(node, tirx)
        if tag is not None:
            launches += tag[0] == "blockIdx.x"
            if tag[0] == "blockIdx.z":
                grid_z.append(_extent(tag[1]))
        elif isinstance(node, (tirx.BufferLoad, tirx.BufferStore)):
            if any(node.buffer.same_as(buffer) for buffer in global_buffers):
                accesses.append(node)
        elif isinstance(node, tirx.Call):
            name = str(getattr(node.op, "name", ""))
            if name in _COUNTED_COPIES:
                in_copies.extend(arg.args[0] for arg in node.args if isinstance(arg, tirx.Call) and arg.args)
            elif name in _COUNTED_GEMMS:
                operands.add(_operand_dtype(node.args[0]))
            elif "gemm" in name:
                uncounted.add(name)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    untracked = sum(1 for access in accesses if not any(access.same_as(arg) for arg in in_copies))
    narrow = {str(b.dtype) for b in global_buffers if DataType(str(b.dtype)).bits < 8 and str(b.dtype) != "bool"}
    copied = [b for b in global_buffers if any(getattr(arg, "buffer", None) is not None and arg.buffer.same_as(b) for arg in in_copies)]
    footprint = sum(_buffer_bytes(buffer, DataType) for buffer in copied)
    return TileOpCounts(
        _count(analyzer.total_flops), _count(analyzer.total_global_bytes), _count(footprint), tuple(grid_z), launches,
        untracked, tuple(sorted(uncounted)), tuple(sorted(narrow)), tuple(sorted(operands - {None})),
    )  # fmt: skip


def _operand_dtype(region: Any) -> str | None:
    """The dtype of a tile operator's operand (a ``tl.region`` of a buffer), None when it is not one."""
    load = region.args[0] if getattr(region, "args", None) else None
    buffer = getattr(load, "buffer", None)
    return str(buffer.dtype) if buffer is not None else None


def fragment_words_per_thread(func: Any) -> float | None:
    """32-bit words of ``local.fragment`` buffers each thread holds (elaborated ``func``, the block's threads).

    A static lower bound of the registers a thread needs: above 255 (the per-thread register
    limit) the kernel spills. None when the block's thread count (``T.Kernel(..., threads=)``,
    the ``tl.launch_threads`` annotation) is not a constant.
    """
    from tvm import DataType, tirx

    threads: list[Any] = []
    words = 0

    def visit(node: Any) -> None:
        nonlocal words
        launch = (getattr(node, "annotations", None) or {}).get("tl.launch_threads")
        if launch is not None:
            extents = [_count(extent) for extent in launch]
            threads.append(math.prod(extents) if all(isinstance(extent, int) for extent in extents) else None)
        for buffer in getattr(node, "alloc_buffers", ()):
            if str(buffer.scope()) == "local.fragment":
                elements = 1
                for extent in buffer.shape:
                    elements *= int(extent)
                words += elements * DataType(str(buffer.dtype)).bits / 32

    tirx.stmt_functor.post_order_visit(func.body, visit)
    extent = threads[0] if threads else None
    return words / extent if isinstance(extent, int) and extent > 0 else None


def _buffer_bytes(buffer: Any, data_type: Any) -> Any:
    """A buffer's size in bytes (an expression when its shape is dynamic)."""
    dtype = data_type(str(buffer.dtype))
    size = (dtype.bits * dtype.lanes + 7) // 8
    for extent in buffer.shape:
        size = size * (int(extent) if type(extent).__name__ == "IntImm" else extent)
    return size


def _with_int64_extents(func: Any) -> Any:
    """``func`` with its regions' extents as int64.

    The Analyzer multiplies a copy's region extents (int32 constants) by its trip
    counts, and TVM folds that in int32: past 2 GiB the bytes wrap (a 4096³ fp16
    GEMM came out negative). With int64 extents the same arithmetic is exact.
    """
    from tvm import tirx
    from tvm.tirx.stmt_functor import ir_transform

    def widened(node: Any) -> Any:
        if getattr(node.op, "name", "") != "tl.region":
            return None
        extents = [tirx.IntImm("int64", int(e)) if isinstance(e, tirx.IntImm) else tirx.Cast("int64", e) for e in node.args[2:]]
        return tirx.Call(node.dtype, node.op, [*node.args[:2], *extents], node.span)

    return func.with_body(ir_transform(func.body, None, widened, ["tirx.Call"]))


def _thread_tag(node: Any, tirx: Any) -> tuple[str, Any] | None:
    """(thread tag, extent) of a grid or block binding: a thread-bound loop, or a ``thread_extent`` attribute."""
    if isinstance(node, tirx.For) and node.thread_binding is not None:
        return str(node.thread_binding.thread_tag), node.extent
    if isinstance(node, tirx.AttrStmt) and node.attr_key == "thread_extent":
        return str(node.node.thread_tag), node.value
    return None


def _count(value: Any) -> int | str:
    """An Analyzer total: an int, or the text of the expression it built from a non-constant trip count."""
    if isinstance(value, int):
        return value
    return int(value) if type(value).__name__ == "IntImm" else str(value)
