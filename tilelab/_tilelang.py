"""The one door to TileLang's internals: what a kernel is, how it elaborates, lowers and compiles.

Capture, tuning (parent and compile workers) and the magic all go through
here, so each TileLang quirk is handled once:

- ``@tilelang.autotune`` wraps a ``@tilelang.jit`` (an ``AutoTuneImpl`` holding
  a ``JITImpl``); its ``configs`` are a list of dicts or a callable of the
  kernel's arguments, and a config may carry ``pass_configs``.
- TileLang normalises ``out_idx`` **in place** ([-1] -> [2]) when it loads a
  kernel from its disk cache, which changes every later cache key in the
  process: it is always handed a copy.
- A kernel's own ``T.annotate_pass_configs`` (the ``tilelang_pass_configs``
  attribute) is merged by ``tilelang.compile`` but not by ``tilelang.lower``.
- An eager kernel declares its ``out_idx`` itself (``tilelang_out_idx``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import linecache
import logging
import math
import os
import platform
import sys
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CACHE_KERNELS_DIR",
    "CACHE_MANIFEST",
    "CACHE_SOURCE_FILES",
    "CacheKey",
    "CacheOutcome",
    "CompileOptions",
    "Lowered",
    "TileOpCounts",
    "autotune_configs",
    "bound_parameters",
    "cache_directory",
    "cache_key",
    "cache_key_or_none",
    "compile_options",
    "compile_traced",
    "device_module",
    "elaborate",
    "elaborated_func",
    "is_autotuned",
    "is_eager",
    "is_kernel",
    "jit_impl",
    "jit_options",
    "kernel_name",
    "kernel_origin",
    "kernel_source_lines",
    "kernel_span",
    "launches",
    "lower",
    "python_function",
    "tile_op_counts",
]

JIT_OPTION_NAMES = ("out_idx", "execution_backend", "target", "target_host", "verbose", "pass_configs", "compile_flags")
_PASS_CONFIGS_KEY = "pass_configs"  # a config's own pass configs (tilelang's _RESERVED_CONFIG_KEYS)


# -- what a kernel is -----------------------------------------------------------
def is_kernel(value: Any) -> bool:
    """A ``@tilelang.jit`` function, an ``@tilelang.autotune`` one, or a ``PrimFunc``."""
    if not type(value).__module__.startswith(("tilelang", "tvm")):
        return False
    from tilelang.autotuner.tuner import AutoTuneImpl
    from tilelang.jit import JITImpl
    from tvm import tirx

    return isinstance(value, (JITImpl, AutoTuneImpl, tirx.PrimFunc))


def is_autotuned(kernel: Any) -> bool:
    return type(kernel).__name__ == "AutoTuneImpl" and hasattr(kernel, "jit_impl")


def jit_impl(kernel: Any) -> Any:
    """The ``JITImpl`` behind ``kernel`` (itself, or what ``@autotune`` wraps); None for other kernels."""
    if is_autotuned(kernel):
        return kernel.jit_impl
    return kernel if hasattr(kernel, "get_tir") and hasattr(kernel, "out_idx") else None


def is_eager(kernel: Any) -> bool:
    """An eager-style kernel (``T.Tensor`` annotations): it needs tensors to elaborate."""
    func = getattr(jit_impl(kernel), "func", None)
    return bool(getattr(func, "tensor_args", None))


def python_function(kernel: Any) -> Any:
    """The user's undecorated Python function (``kernel`` itself for a plain function or PrimFunc)."""
    jit = jit_impl(kernel)
    inner = getattr(jit, "func", None) if jit is not None else None
    return getattr(inner, "orig_func", None) or inner or kernel


def kernel_name(kernel: Any) -> str:
    """The kernel's Python name (a PrimFunc's global symbol)."""
    function = python_function(kernel)
    name = getattr(function, "__name__", None)
    if name:
        return str(name)
    attrs = getattr(kernel, "attrs", None)
    if attrs is not None and "global_symbol" in attrs:
        return str(attrs["global_symbol"])
    return "kernel"


def kernel_origin(kernel: Any) -> str | None:
    """The file that defined the kernel's Python function (a cell's pseudo-file in notebooks)."""
    code = getattr(python_function(kernel), "__code__", None)
    return code.co_filename if code is not None else None


def kernel_span(kernel: Any) -> tuple[int, int] | None:
    """First and last line of the kernel's Python function in :func:`kernel_origin`."""
    import inspect

    try:
        lines, first = inspect.getsourcelines(python_function(kernel))
    except (OSError, TypeError):
        return None
    return first, first + len(lines) - 1


def kernel_source_lines(kernel: Any) -> tuple[str, str, int, int] | None:
    """(file, the file's whole text, first line, last line) of the kernel's Python function; None for a bare PrimFunc."""
    origin, span = kernel_origin(kernel), kernel_span(kernel)
    lines = linecache.getlines(origin) if origin is not None and span is not None else []
    return (origin, "".join(lines), *span) if lines else None


def bound_parameters(kernel: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The kernel's Python parameters as called, defaults included."""
    signature = getattr(jit_impl(kernel), "signature", None)
    if signature is None:
        return {}
    try:
        bound = signature.bind_partial(*args, **kwargs)
    except TypeError:
        return dict(kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def jit_options(kernel: Any) -> dict[str, Any] | None:
    """The ``@tilelang.jit(...)`` options to re-decorate the Python function with; None for a plain function."""
    jit = jit_impl(kernel)
    if jit is None:
        return None
    return {name: getattr(jit, name) for name in JIT_OPTION_NAMES}


# -- @autotune ------------------------------------------------------------------
def autotune_configs(kernel: Any, args: tuple = (), kwargs: dict | None = None) -> list[dict[str, Any]]:
    """The configs an ``@tilelang.autotune`` kernel declares (a callable is called with the kernel's arguments)."""
    configs = kernel.configs
    if callable(configs):
        configs = configs(*args, **(kwargs or {}))
    return [dict(config) for config in configs or ()]


# -- elaborate, lower, compile ----------------------------------------------------
@dataclass
class CompileOptions:
    """What ``tilelang.compile`` / ``JITKernel`` take besides the PrimFunc, with TileLang's quirks applied."""

    out_idx: Any = None
    pass_configs: dict[Any, Any] = field(default_factory=dict)
    execution_backend: Any = None
    compile_flags: Any = None  # the @jit's own; the kernel's annotated flags stay in the PrimFunc


def elaborate(kernel: Any, args: tuple, kwargs: dict, target: Any) -> tuple[Any, CompileOptions]:
    """The PrimFunc of one call of ``kernel`` under ``target``, and how to compile it.

    A config's ``pass_configs`` entry (``@autotune`` configs may carry one) is
    merged into the pass configs rather than passed to the kernel.
    """
    from tvm import tirx

    kwargs = dict(kwargs)
    config_pass_configs = kwargs.pop(_PASS_CONFIGS_KEY, None) if _takes_config_pass_configs(kernel, kwargs) else None
    if isinstance(kernel, tirx.PrimFunc):
        if args or kwargs:
            raise TypeError("a bare PrimFunc takes no arguments; pass the @tilelang.jit function instead")
        return kernel, CompileOptions()
    jit = jit_impl(kernel)
    with target:
        func = jit.get_tir(*args, **kwargs) if jit is not None else kernel(*args, **kwargs)
    return func, compile_options(kernel, func, config_pass_configs)


def _takes_config_pass_configs(kernel: Any, kwargs: dict) -> bool:
    """A ``pass_configs`` keyword is a config's pass configs, unless the kernel has a parameter of that name."""
    if _PASS_CONFIGS_KEY not in kwargs:
        return False
    signature = getattr(jit_impl(kernel), "signature", None)
    return signature is None or _PASS_CONFIGS_KEY not in signature.parameters


def compile_options(kernel: Any, func: Any, extra_pass_configs: dict | None = None) -> CompileOptions:
    """The options TileLang itself would compile ``func`` (elaborated from ``kernel``) with."""
    jit = jit_impl(kernel)
    attrs = func.attrs
    configs = dict(attrs["tilelang_pass_configs"]) if attrs and "tilelang_pass_configs" in attrs else {}
    if jit is None:
        return CompileOptions(pass_configs=configs)
    configs.update(jit.pass_configs or {})
    configs.update(extra_pass_configs or {})
    out_idx = None if (attrs and "tilelang_out_idx" in attrs) else jit.out_idx
    if isinstance(out_idx, (list, tuple)):
        out_idx = list(out_idx)  # tilelang normalises it in place; the kernel's own list must not change
    return CompileOptions(out_idx, configs, jit.execution_backend, jit.compile_flags)


@dataclass
class Lowered:
    """One lowering (or compile): the device module and sources; ``kernel`` when runnable."""

    device_mod: Any
    device_source: str
    host_source: str | None
    kernel: Any = None
    func: Any = None  # the elaborated PrimFunc it was lowered from


def lower(func: Any, options: CompileOptions, choice: Any, line_directives: bool = False) -> Lowered:
    """Lower ``func`` for ``choice`` (a :class:`tilelab.targets.TargetChoice`); compile it when it can run.

    A compile builds a ``JITKernel`` directly, not ``tilelang.compile``: the
    latter's kernel-cache hit would run no passes (the recorder would see none).
    """
    import tilelang

    configs = dict(options.pass_configs)
    if line_directives:
        configs[tilelang.PassConfigKey.TL_EMIT_LINE_DIRECTIVES] = True
    target = choice.tvm_target()
    if choice.runnable:
        from tilelang.jit.kernel import JITKernel

        backend = options.execution_backend
        if backend in (None, "auto"):
            backend = "tvm_ffi" if choice.is_cuda else "cython"
        compiled = JITKernel(
            func,
            out_idx=options.out_idx,
            target=target,
            pass_configs=configs,
            execution_backend=backend,
            compile_flags=_all_compile_flags(func, options.compile_flags),
        )
        return Lowered(compiled.artifact.device_mod, compiled.get_kernel_source(), _host_source(compiled), compiled, func)
    with tilelang.transform.PassContext(opt_level=3, config=configs), target:
        artifact = tilelang.lower(func, target=target, enable_device_compile=False, enable_host_codegen=True)
    host = artifact.host_mod.inspect_source() if artifact.host_mod is not None else None
    return Lowered(artifact.device_mod, str(artifact.kernel_source), host, func=func)


def compile_cached(func: Any, options: CompileOptions, choice: Any) -> Any:
    """``tilelang.compile`` (through TileLang's kernel cache): what a tuning sweep runs.

    A hit in TileLang's in-memory cache is what TileLab wants here (a worker
    compiled the config); TileLang warns about each one, so that warning alone
    is dropped for this call.
    """
    import tilelang

    _install_cache_hit_filter()
    token = _quiet_cache_hits.set(True)
    try:
        return tilelang.compile(
            func,
            target=choice.tvm_target(),
            out_idx=options.out_idx,
            execution_backend=options.execution_backend,
            pass_configs=options.pass_configs or None,
            compile_flags=options.compile_flags,
        )
    finally:
        _quiet_cache_hits.reset(token)


_quiet_cache_hits: ContextVar[bool] = ContextVar("tilelab_quiet_cache_hits", default=False)
_memory_hits: ContextVar[list | None] = ContextVar("tilelab_memory_hits", default=None)


class _CacheHitFilter(logging.Filter):
    # TileLang says a kernel came from its in-memory cache only in this warning: it is how a memory hit is told.
    def filter(self, record: logging.LogRecord) -> bool:
        if "in memory cache" not in record.getMessage():
            return True
        hits = _memory_hits.get()
        if hits is not None:
            hits.append(record.getMessage())
        return not _quiet_cache_hits.get()


@functools.cache
def _install_cache_hit_filter() -> None:
    logging.getLogger("tilelang.cache.kernel_cache").addFilter(_CacheHitFilter())


def _all_compile_flags(func: Any, own: Any) -> list[str] | None:
    """The kernel's ``T.annotate_compile_flags`` and its ``@jit`` flags, merged as ``tilelang.compile`` does."""
    attrs = func.attrs
    flags = list(attrs["tilelang_compile_flags"]) if attrs and "tilelang_compile_flags" in attrs else []
    flags += [own] if isinstance(own, str) else list(own or ())
    return [str(flag) for flag in flags] or None


def _host_source(compiled: Any) -> str | None:
    # Some execution backends have no host source to show; that is not an error.
    try:
        return compiled.get_host_source()
    except Exception:
        return None


# -- TileLang's kernel cache ---------------------------------------------------------
# Its disk entries live at <TILELANG_CACHE_DIR>/<version>/<platform>-<machine>/kernels/<key>/, each with a
# manifest.json hashing its files; its key is the SHA-256 of a JSON of the printed TIR's SHA-256, out_idx,
# the resolved target, host and execution backend, the normalised pass configs, compile flags, version and
# machine (KernelCache._generate_key in tilelang 0.1.15). TileLab computes the same key with its public
# pieces; tests check it against the entries TileLang writes.
CACHE_KERNELS_DIR = "kernels"
CACHE_MANIFEST = "manifest.json"
CACHE_SOURCE_FILES = ("device_kernel.cu", "host_kernel.cu")


def cache_directory() -> Path:
    """TileLang's cache directory: ``$TILELANG_CACHE_DIR``, else ``~/.tilelang/cache`` (no tilelang import)."""
    return Path(os.environ.get("TILELANG_CACHE_DIR") or "~/.tilelang/cache").expanduser()


@dataclass(frozen=True)
class CacheKey:
    """TileLang's kernel-cache key of one compile, the data it hashes, and its disk entry's path."""

    key: str
    entry: str
    parts: dict[str, Any]
    tir_structure: str  # tvm.ir.structural_hash of the PrimFunc (names ignored)


def cache_key(func: Any, options: CompileOptions, choice: Any) -> CacheKey:
    """The key :func:`compile_cached` (``tilelang.compile``) files ``func`` under, computed as TileLang does."""
    import tilelang
    import tvm
    from tilelang import env
    from tilelang.backend.module import create_backend_context
    from tilelang.transform.pass_config import normalize_pass_configs

    attrs = func.attrs
    out_idx = list(attrs["tilelang_out_idx"]) if attrs and "tilelang_out_idx" in attrs else options.out_idx
    configs = dict(options.pass_configs) or None
    if attrs and "tilelang_pass_configs" in attrs:
        configs = {**dict(attrs["tilelang_pass_configs"]), **(configs or {})}
    flags = options.compile_flags
    if attrs and "tilelang_compile_flags" in attrs:
        flags = [*attrs["tilelang_compile_flags"], *([flags] if isinstance(flags, str) else flags or [])]
    backend = options.execution_backend or env.get_default_execution_backend()
    context = create_backend_context(choice.tvm_target(), None, backend)
    parts = {
        "func": hashlib.sha256(func.script(show_meta=True).encode()).hexdigest(),
        "out_idx": tuple(out_idx) if isinstance(out_idx, (list, tuple)) else [out_idx],
        "args_repr": (),
        "target": str(context.target),
        "target_host": str(context.target_host) if context.target_host else None,
        "execution_backend": context.execution_backend.name,
        "pass_configs": normalize_pass_configs(configs),
        "compile_flags": [str(flag) for flag in flags] if isinstance(flags, list) else flags,
        "version": tilelang.__version__,
        "platform": platform.machine(),
    }
    if env.should_use_kernel_cache_lib_stamp():
        from tilelang.env import TL_LIBS

        stamp = _library_stamp(tuple(TL_LIBS or ()))
        if stamp:
            parts["tilelang_lib"] = stamp
    if sys.platform == "darwin":
        import torch

        parts["torch"] = torch.__version__
    key = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    entry = Path(str(env.TILELANG_CACHE_DIR)) / _cache_namespace(tilelang.__version__) / CACHE_KERNELS_DIR / key
    structure = str(tvm.ir.structural_hash(func, map_free_vars=True))
    return CacheKey(key, str(entry), json.loads(json.dumps(parts, default=str)), structure)


def _cache_namespace(version: str) -> str:
    """``0.1.15/linux-x86_64``: the folder of one TileLang version and machine in its cache directory."""

    def clean(text: str) -> str:
        return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in text).strip("._-") or "unknown"

    public, sep, local = version.partition("+")
    local = "".join(ch if ch.isalnum() else "_" for ch in local).strip("_")
    folder = f"{clean(public)}_{local}" if sep and local else clean(public)
    return f"{folder}/{clean(sys.platform)}-{clean(platform.machine())}"


@functools.cache
def _library_stamp(directories: tuple[str, ...]) -> str | None:
    """TileLang's native libraries' content hashes (its key includes them under TILELANG_KERNEL_CACHE_USE_LIB_STAMP)."""
    names = ("libtilelang.dylib", "libtilelang.so", "libtvm_runtime.dylib", "libtvm_compiler.dylib") if sys.platform == "darwin" else (
        "libtilelang.so", "libtvm_runtime.so", "libtvm_compiler.so")  # fmt: skip
    stamps, seen = [], set()
    for directory in directories:
        for name in names:
            path = Path(directory) / name
            if name not in seen and path.exists():
                stamps.append(f"{name}:{hashlib.sha256(path.read_bytes()).hexdigest()}")
                seen.add(name)
    return "|".join(stamps) or None


@dataclass(frozen=True)
class CacheOutcome:
    """Who served one :func:`compile_traced`: ``"memory"``, ``"disk"`` or ``"fresh"``, in how many seconds."""

    served_by: str
    seconds: float
    key: CacheKey | None
    in_disk_cache: bool


def cache_key_or_none(func: Any, options: CompileOptions, choice: Any) -> CacheKey | None:
    """:func:`cache_key`, or None when it cannot be computed.

    The key is reported, never needed: a TileLang whose key is made otherwise must not fail a compile.
    """
    try:
        return cache_key(func, options, choice)
    except Exception:
        return None


def compile_traced(func: Any, options: CompileOptions, choice: Any) -> tuple[Any, CacheOutcome]:
    """:func:`compile_cached`, and whether TileLang's memory cache, its disk cache or a fresh compile served it."""
    from tilelang import env

    key = cache_key_or_none(func, options, choice)
    on_disk = key is not None and env.is_cache_enabled() and Path(key.entry).is_dir()
    _install_cache_hit_filter()
    hits: list[str] = []
    token = _memory_hits.set(hits)
    started = time.perf_counter()
    try:
        kernel = compile_cached(func, options, choice)
    finally:
        _memory_hits.reset(token)
    served = "memory" if hits else "disk" if on_disk else "fresh"
    return kernel, CacheOutcome(served, time.perf_counter() - started, key, on_disk)


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
    """Every device function's launch: name, grid, block and dynamic shared bytes, in symbol order."""
    found = []
    for global_var, func in device_mod.functions.items():
        attrs = func.attrs
        if attrs is None or "thread_extent" not in attrs:
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
