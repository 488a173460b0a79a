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

from tilelab._tilelang.analysis import (
    TileOpCounts,
    device_module,
    elaborated_func,
    fragment_words_per_thread,
    launches,
    tile_op_counts,
)
from tilelab._tilelang.cache import (
    CACHE_KERNELS_DIR,
    CACHE_MANIFEST,
    CACHE_SOURCE_FILES,
    CacheKey,
    cache_directory,
    cache_key,
    cache_key_or_none,
)
from tilelab._tilelang.kernels import (
    HOST_TARGETS,
    CompileOptions,
    autotune_configs,
    bound_parameters,
    compile_options,
    declared_host_target,
    elaborate,
    is_autotuned,
    is_eager,
    is_kernel,
    jit_impl,
    jit_options,
    kernel_name,
    kernel_origin,
    kernel_source_lines,
    kernel_span,
    python_function,
)
from tilelab._tilelang.lowering import (
    CacheOutcome,
    Lowered,
    compile_cached,
    compile_traced,
    export_library,
    lower,
)

__all__ = [
    "CACHE_KERNELS_DIR",
    "CACHE_MANIFEST",
    "CACHE_SOURCE_FILES",
    "HOST_TARGETS",
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
    "compile_cached",
    "compile_options",
    "compile_traced",
    "declared_host_target",
    "device_module",
    "elaborate",
    "elaborated_func",
    "export_library",
    "fragment_words_per_thread",
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
