"""Lowering and compiling through TileLang, and which of its caches served a compile."""

from __future__ import annotations

import functools
import logging
import time
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilelab._tilelang.cache import CacheOutcome, cache_key_or_none
from tilelab._tilelang.kernels import CompileOptions
from tilelab.scratch import process_scratch, temporary_files_in


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
    Its build files go to this process's scratch folder (:func:`tilelab.scratch.process_scratch`), as do
    :func:`compile_cached`'s: TileLang would leave them in the temporary folder.
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
        with temporary_files_in(process_scratch()):
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
        with temporary_files_in(process_scratch()):
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


def export_library(kernel: Any, path: str) -> None:
    """``kernel.export_library(path)``, without the INFO line TileLang logs for it.

    TileLab exports a kernel's library to read its cubin, in the background: the line would land in whatever
    notebook cell runs then, naming a temporary file the user never asked for.
    """
    _install_export_filter()
    token = _quiet_exports.set(True)
    try:
        kernel.export_library(path)
    finally:
        _quiet_exports.reset(token)


_quiet_exports: ContextVar[bool] = ContextVar("tilelab_quiet_exports", default=False)


class _ExportFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (_quiet_exports.get() and record.getMessage().startswith("Kernel library exported"))


@functools.cache
def _install_export_filter() -> None:
    logging.getLogger("tilelang.jit.kernel").addFilter(_ExportFilter())


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
