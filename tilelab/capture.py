"""Compile one kernel with its passes recorded: with ``recorder``, the only door to tilelang's compiler.

Elaborates the kernel, lowers it (or compiles it for a present device) under a
:class:`~tilelab.recorder.PassRecorder`, and assembles the
:class:`~tilelab.records.KernelRecord`: sources with their ``#line`` links,
launch facts, timings and a stable cache key.
"""

from __future__ import annotations

import hashlib
import json
import linecache
import re
import time
from dataclasses import dataclass
from typing import Any

from tilelab.errors import KernelCompileError, captured_compiler_output, error_record, source_file
from tilelab.recorder import PassRecorder
from tilelab.records import (
    FORMAT_VERSION,
    CompileMode,
    KernelRecord,
    LaunchRecord,
    LineLink,
    SourceRecord,
    Status,
    TimingRecord,
)
from tilelab.targets import TargetChoice, resolve_target

__all__ = ["CompiledKernel", "compile_kernel", "describe_arguments", "explore", "place"]

_LINE_DIRECTIVE = re.compile(r'^\s*#line\s+(\d+)\s+"([^"]*)"\s*$')


def place(*shape: int, dtype: Any = None):
    """A ``meta`` tensor of ``shape``: a placeholder for eager kernels, no memory allocated."""
    import torch

    return torch.empty(shape, dtype=dtype or torch.float16, device="meta")


@dataclass
class CompiledKernel:
    """What :func:`compile_kernel` returns: the record and, when compiled, the runnable kernel."""

    record: KernelRecord
    kernel: Any = None  # tilelang JITKernel when record.mode is COMPILED


def explore(kernel: Any, *args: Any, arch: str | None = None, target: Any = None, **kwargs: Any) -> KernelRecord:
    """Compile ``kernel`` with every pass recorded; see :func:`tilelab.explore`."""
    return compile_kernel(kernel, args, kwargs, resolve_target(arch, target)).record


def compile_kernel(kernel: Any, args: tuple, kwargs: dict, choice: TargetChoice, name: str | None = None) -> CompiledKernel:
    """Elaborate, lower (and compile when ``choice.runnable``) with passes recorded.

    Raises :class:`~tilelab.errors.KernelCompileError` carrying a failed record.
    """
    _check_kernel(kernel)
    name = name or _kernel_name(kernel)
    recorder = PassRecorder()
    facts = _Facts(name=name, choice=choice, arguments=describe_arguments(args, kwargs))
    with captured_compiler_output() as output:
        try:
            started = time.perf_counter()
            func, options = _elaborate(kernel, args, kwargs, choice)
            facts.elaborate_s = time.perf_counter() - started
            facts.cache_key = _cache_key(func, choice, options["pass_configs"])
            with recorder.installed():
                started = time.perf_counter()
                compiled = _lower(func, options, choice)
                facts.total_s = time.perf_counter() - started
        except Exception as exc:  # the compiler's failures come in every type; each becomes a failed record
            error = error_record(
                exc,
                output.text(),
                stage=recorder.stage(elaborated=facts.stage_after_elaborate()),
                kernel_file=_kernel_origin(kernel),
                parameters=_bound_parameters(kernel, args, kwargs),
            )
            raise KernelCompileError(facts.failed(recorder, error)) from exc
    return CompiledKernel(facts.finished(recorder, compiled), compiled.kernel)


@dataclass
class _Lowered:
    device_mod: Any
    device_source: str
    host_source: str | None
    kernel: Any = None


@dataclass
class _Facts:
    """What a compile learns besides its passes, gathered as it goes."""

    name: str
    choice: TargetChoice
    arguments: dict[str, str]
    cache_key: str = ""
    elaborate_s: float = 0.0
    total_s: float = 0.0

    def _base(self) -> dict[str, Any]:
        import tilelang

        return {
            "name": self.name,
            "target": self.choice.as_json(),
            "arch": self.choice.arch,
            "tilelang_version": tilelang.__version__,
            "cache_key": self.cache_key,
            "arguments": self.arguments,
            "device_name": self.choice.device_name,
        }

    def failed(self, recorder: PassRecorder, error) -> KernelRecord:
        return KernelRecord(
            status=Status.FAILED,
            mode=CompileMode.COMPILED if self.choice.runnable else CompileMode.LOWERED,
            passes=tuple(recorder.passes),
            layouts=recorder.layouts,
            timings=TimingRecord(self.elaborate_s, recorder.lower_s, 0.0),
            error=error,
            **self._base(),
        )

    def finished(self, recorder: PassRecorder, lowered: _Lowered) -> KernelRecord:
        lower_s = recorder.lower_s
        return KernelRecord(
            status=Status.OK,
            mode=CompileMode.COMPILED if lowered.kernel is not None else CompileMode.LOWERED,
            passes=tuple(recorder.passes),
            source=_source_record(lowered, self.choice),
            layouts=recorder.layouts,
            launch=_launch_record(lowered.device_mod),
            timings=TimingRecord(self.elaborate_s, lower_s, max(0.0, self.total_s - lower_s)),
            warnings=tuple(recorder.warnings),
            **self._base(),
        )

    def stage_after_elaborate(self) -> bool:
        return bool(self.cache_key)


def _kernel_name(kernel: Any) -> str:
    func = getattr(kernel, "func", None)
    for candidate in (getattr(func, "__name__", None), getattr(kernel, "__name__", None)):
        if candidate:
            return str(candidate)
    attrs = getattr(kernel, "attrs", None)
    if attrs is not None and "global_symbol" in attrs:
        return str(attrs["global_symbol"])
    return "kernel"


def _kernel_origin(kernel: Any) -> str | None:
    """The file that defined the kernel's Python function (a cell's pseudo-file in notebooks)."""
    func = getattr(getattr(kernel, "func", None), "orig_func", None) or getattr(kernel, "func", None)
    code = getattr(func, "__code__", None)
    return code.co_filename if code is not None else None


def _bound_parameters(kernel: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The kernel's Python parameters as called, defaults included."""
    signature = getattr(kernel, "signature", None)
    if signature is None:
        return {}
    try:
        bound = signature.bind_partial(*args, **kwargs)
    except TypeError:
        return dict(kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def describe_arguments(args: tuple, kwargs: dict) -> dict[str, str]:
    """Short reprs of a kernel's arguments (tensors by shape and dtype)."""
    described = {f"arg{i}": _short_repr(value) for i, value in enumerate(args)}
    described.update({key: _short_repr(value) for key, value in kwargs.items()})
    return described


def _short_repr(value: Any) -> str:
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"Tensor[{', '.join(str(int(s)) for s in shape)}; {dtype}]"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_kernel(kernel: Any) -> None:
    from tilelang.jit import JITImpl
    from tvm import tirx

    if not isinstance(kernel, (JITImpl, tirx.PrimFunc)):
        raise TypeError(f"explore() needs a @tilelang.jit function or a PrimFunc, got {type(kernel).__name__}")


def _elaborate(kernel: Any, args: tuple, kwargs: dict, choice: TargetChoice) -> tuple[Any, dict[str, Any]]:
    import tilelang
    from tvm import tirx

    if isinstance(kernel, tirx.PrimFunc):
        if args or kwargs:
            raise TypeError("a bare PrimFunc takes no arguments; pass the @tilelang.jit function instead")
        return kernel, {"out_idx": None, "pass_configs": {}, "execution_backend": None}
    with choice.tvm_target():
        func = kernel.get_tir(*args, **kwargs)
    configs = dict(kernel.pass_configs or {})
    if func.attrs and "tilelang_pass_configs" in func.attrs:
        configs = {**dict(func.attrs["tilelang_pass_configs"]), **configs}
    configs[tilelang.PassConfigKey.TL_EMIT_LINE_DIRECTIVES] = True
    out_idx = None if (func.attrs and "tilelang_out_idx" in func.attrs) else kernel.out_idx
    if isinstance(out_idx, (list, tuple)):
        out_idx = list(out_idx)  # tilelang normalises it in place; the kernel's own list must not change
    return func, {"out_idx": out_idx, "pass_configs": configs, "execution_backend": kernel.execution_backend}


def _cache_key(func: Any, choice: TargetChoice, pass_configs: dict) -> str:
    import tilelang
    import tvm

    # The printed TIR is not stable across elaborations (fresh variable names); the structural hash is.
    structure = str(tvm.ir.structural_hash(func, map_free_vars=True))
    digest = hashlib.sha256()
    for part in (structure, choice.as_json(), json.dumps({str(k): str(v) for k, v in pass_configs.items()}, sort_keys=True)):
        digest.update(part.encode())
    digest.update(f"{tilelang.__version__}/{FORMAT_VERSION}".encode())
    return digest.hexdigest()


def _lower(func: Any, options: dict[str, Any], choice: TargetChoice) -> _Lowered:
    import tilelang

    target = choice.tvm_target()
    if choice.runnable:
        from tilelang.jit.kernel import JITKernel

        # JITKernel, not tilelang.compile: a kernel-cache hit would run no passes.
        backend = options["execution_backend"] or ("tvm_ffi" if choice.is_cuda else "cython")
        jit_kernel = JITKernel(
            func,
            out_idx=options["out_idx"],
            target=target,
            pass_configs=options["pass_configs"],
            execution_backend=backend,
        )
        artifact = jit_kernel.artifact
        return _Lowered(artifact.device_mod, jit_kernel.get_kernel_source(), _host_source(jit_kernel), jit_kernel)
    with tilelang.transform.PassContext(opt_level=3, config=options["pass_configs"]), target:
        artifact = tilelang.lower(func, target=target, enable_device_compile=False, enable_host_codegen=True)
    host = artifact.host_mod.inspect_source() if artifact.host_mod is not None else None
    return _Lowered(artifact.device_mod, str(artifact.kernel_source), host)


def _host_source(jit_kernel: Any) -> str | None:
    # Some execution backends have no host source to show; that is not an error.
    try:
        return jit_kernel.get_host_source()
    except Exception:
        return None


def _source_record(lowered: _Lowered, choice: TargetChoice) -> SourceRecord:
    device, links = _strip_line_directives(lowered.device_source)
    kernel_file = _kernel_file(links)
    return SourceRecord(
        device=device,
        host=lowered.host_source,
        language="cuda" if choice.is_cuda else "c",
        line_links=links,
        kernel_file=kernel_file,
        kernel_source="".join(linecache.getlines(kernel_file)) if kernel_file else "",
    )


def _strip_line_directives(source: str) -> tuple[str, tuple[LineLink, ...]]:
    """Remove ``#line N "file"`` directives; link each remaining line to its origin."""
    kept: list[str] = []
    links: list[LineLink] = []
    origin: tuple[str, int] | None = None
    for line in source.splitlines():
        match = _LINE_DIRECTIVE.match(line)
        if match:
            origin = (source_file(match.group(2)), int(match.group(1)))
            continue
        kept.append(line)
        if origin is not None and line.strip():
            links.append(LineLink(len(kept), origin[0], origin[1]))
    return "\n".join(kept) + "\n", tuple(links)


def _kernel_file(links: tuple[LineLink, ...]) -> str:
    """The user's file among the linked ones: the most linked file outside tilelang."""
    import tilelang

    package_dir = tilelang.__file__.rsplit("/", 1)[0]
    counts: dict[str, int] = {}
    for link in links:
        if not link.file.startswith(package_dir):
            counts[link.file] = counts.get(link.file, 0) + 1
    return max(counts, key=lambda f: counts[f]) if counts else ""


def _extent(value: Any) -> int | str:
    """A launch extent: an int, or its expression when it depends on a dynamic shape."""
    return int(value) if type(value).__name__ == "IntImm" else str(value)


def _launch_record(device_mod: Any) -> LaunchRecord | None:
    for _, func in device_mod.functions.items():
        attrs = func.attrs
        if attrs is None or "thread_extent" not in attrs:
            continue
        extent = {str(k): _extent(v) for k, v in attrs["thread_extent"].items()}
        grid = tuple(extent.get(f"blockIdx.{axis}", 1) for axis in "xyz")
        block = tuple(extent.get(f"threadIdx.{axis}", 1) for axis in "xyz")
        shared = int(attrs["dyn_shared_memory_buf"]) if "dyn_shared_memory_buf" in attrs else 0
        return LaunchRecord(grid, block, shared)  # type: ignore[arg-type]
    return None

