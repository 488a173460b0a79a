"""TileLang's kernel cache: where it lives and the key it files a compile under, computed as TileLang does."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilelab._tilelang.kernels import CompileOptions

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
    """Who served one :func:`~tilelab._tilelang.lowering.compile_traced`: ``"memory"``, ``"disk"`` or ``"fresh"``, in how many seconds."""

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
