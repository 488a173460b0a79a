"""Compile one kernel with its passes recorded: with ``recorder``, the only door to tilelang's compiler.

Elaborates the kernel, lowers it (or compiles it for a present device) under a
:class:`~tilelab.recorder.PassRecorder`, and assembles the
:class:`~tilelab.records.KernelRecord`: sources with their ``#line`` links,
launch facts, timings and a stable cache key; the sources carry their repaired map to the
kernel's lines (:mod:`tilelab.source_map`), computed once here.
"""

from __future__ import annotations

import hashlib
import json
import linecache
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tilelab import _tilelang as tl
from tilelab._time_limit import EXPLORE_TIMEOUT_S, TimeLimit, check_timeout
from tilelab.errors import KernelCompileError, captured_compiler_output, error_record, source_file
from tilelab.estimate import static_estimate
from tilelab.machine.build import machine_code_for
from tilelab.machine.occupancy import launch_problems
from tilelab.provenance import CacheSource, build_provenance
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
from tilelab.source_map import with_source_map
from tilelab.targets import TargetChoice, resolve_target

__all__ = [
    "EXPLORE_TIMEOUT_S",
    "CompiledKernel",
    "compile_kernel",
    "describe_arguments",
    "explore",
    "place",
    "with_machine_code",
]

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


def explore(
    kernel: Any,
    *args: Any,
    arch: str | None = None,
    target: Any = None,
    machine_code: bool = True,
    timeout: float | None = EXPLORE_TIMEOUT_S,
    **kwargs: Any,
) -> KernelRecord:
    """Compile ``kernel`` with every pass recorded; see :func:`tilelab.explore`."""
    check_timeout(timeout)
    compiled = compile_kernel(kernel, args, kwargs, kernel_target(kernel, arch, target), timeout=timeout)
    return with_machine_code(compiled.record, compiled.kernel) if machine_code else compiled.record


def kernel_target(kernel: Any, arch: str | None = None, target: Any = None) -> TargetChoice:
    """What ``kernel`` compiles for: ``target`` or ``arch`` where given; else the CPU target its own
    ``@tilelang.jit(target=...)`` names, as TileLang would; else the GPU present (``sm_90``, lowering only, without one)."""
    if arch is None and target is None:
        target = tl.declared_host_target(kernel)
    return resolve_target(arch, target)


def with_machine_code(record: KernelRecord, kernel: Any = None) -> KernelRecord:
    """``record`` with its machine code (PTX, SASS, resources, occupancy) built by nvcc; unchanged when not CUDA.

    ``kernel``, the ``JITKernel`` TileLang compiled for the record, shows its own cubin's SASS.
    """
    if not record.has_cuda_source:
        return record

    return record.with_machine_code(machine_code_for(record, kernel=kernel))


def compile_kernel(
    kernel: Any,
    args: tuple,
    kwargs: dict,
    choice: TargetChoice,
    name: str | None = None,
    timeout: float | None = EXPLORE_TIMEOUT_S,
) -> CompiledKernel:
    """Elaborate, lower (and compile when ``choice.runnable``) with passes recorded.

    An ``@tilelang.autotune`` kernel is compiled for one of its configs: the
    keyword arguments given, the rest from its first config (the record says so).
    Past ``timeout`` seconds (None: no limit) the compile stops and fails.

    Raises :class:`~tilelab.errors.KernelCompileError` carrying a failed record.
    """
    _check_kernel(kernel)
    name = name or tl.kernel_name(kernel)
    kwargs, notes = _with_autotune_config(kernel, args, kwargs)
    recorder = PassRecorder()
    recorder.warnings.extend(notes)
    facts = _Facts(name=name, choice=choice, arguments=describe_arguments(args, kwargs), source=tl.kernel_source_lines(kernel))
    limit = TimeLimit(timeout, f"{name} did not finish elaborating and lowering within {timeout or 0:g} s (timeout= gives it longer)")
    with captured_compiler_output() as output:
        try:
            with limit:
                started = time.perf_counter()
                func, options = tl.elaborate(kernel, args, kwargs, choice.tvm_target())
                facts.elaborate_s = time.perf_counter() - started
                facts.cache_key = _cache_key(func, choice, options.pass_configs)
                facts.tilelang_key = tl.cache_key_or_none(func, options, choice)
                with recorder.installed():
                    started = time.perf_counter()
                    compiled = tl.lower(func, options, choice, line_directives=True)
                    facts.total_s = time.perf_counter() - started
        except Exception as exc:  # the compiler's failures come in every type; each becomes a failed record
            if limit.expired and not isinstance(exc, TimeoutError):  # the compiler wrapped our TimeoutError
                exc = TimeoutError(limit.message)
            error = error_record(
                exc,
                output.text(),
                stage=recorder.stage(elaborated=facts.stage_after_elaborate()),
                kernel_file=tl.kernel_origin(kernel),
                parameters=tl.bound_parameters(kernel, args, kwargs),
                kernel_span=tl.kernel_span(kernel),
            )
            raise KernelCompileError(facts.failed(recorder, error)) from exc
    return CompiledKernel(_with_estimate(facts.finished(recorder, compiled), func, choice), compiled.kernel)


def _with_estimate(record: KernelRecord, func: Any, choice: TargetChoice) -> KernelRecord:
    """``record`` with its static roofline estimate (CUDA targets), or the one-line reason it has none."""
    if not choice.is_cuda:
        return record

    estimate, reason = static_estimate(func, choice.arch, choice.device_name)
    return replace(record, estimate=estimate, estimate_note=reason or "")


def _defaulted(kernel: Any, args: tuple) -> set[str]:
    """The parameters a call with ``args`` leaves to their defaults."""
    signature = getattr(tl.jit_impl(kernel), "signature", None)
    names = list(signature.parameters) if signature is not None else []
    return set(names[len(args) :])


def _with_autotune_config(kernel: Any, args: tuple, kwargs: dict) -> tuple[dict, list[str]]:
    """``kwargs`` completed from an ``@autotune`` kernel's first config, and a note saying so."""
    if not tl.is_autotuned(kernel):
        return kwargs, []
    configs = tl.autotune_configs(kernel, args, kwargs)
    if not configs:
        return kwargs, []
    first = configs[0]
    given = set(kwargs) | set(tl.bound_parameters(kernel, args, {})) - _defaulted(kernel, args)
    taken = {key: value for key, value in first.items() if key not in given}
    if not taken:
        return kwargs, []
    shown = ", ".join(f"{key}={value!r}" for key, value in taken.items())
    note = (
        f"@autotune kernel: explored with its first of {len(configs)} configs ({shown}); "
        "pass these as keyword arguments to explore another"
    )
    return {**kwargs, **taken}, [note]


@dataclass
class _Facts:
    """What a compile learns besides its passes, gathered as it goes."""

    name: str
    choice: TargetChoice
    arguments: dict[str, str]
    source: tuple[str, str, int, int] | None = None  # the kernel's file, its text and the function's lines
    cache_key: str = ""
    tilelang_key: tl.CacheKey | None = None
    elaborate_s: float = 0.0
    total_s: float = 0.0

    def _base(self) -> dict[str, Any]:
        import tilelang

        key = self.tilelang_key
        in_disk = key is not None and Path(key.entry).is_dir()
        return {
            # Capture always compiles (a cache hit would run no passes to record): fresh, in its lowering's seconds.
            "provenance": build_provenance(CacheSource.FRESH, self.total_s or None, key, self.source, in_disk),
            "name": self.name,
            "target": self.choice.as_json(),
            "arch": self.choice.arch,
            "tilelang_version": tilelang.__version__,
            "cache_key": self.cache_key,
            "arguments": self.arguments,
            "device_name": self.choice.device_name,
            "lowered_because": self.choice.lowered_because,
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

    def finished(self, recorder: PassRecorder, lowered: tl.Lowered) -> KernelRecord:
        lower_s = recorder.lower_s
        launches = tuple(LaunchRecord(**launch) for launch in tl.launches(lowered.device_mod))
        return KernelRecord(
            status=Status.OK,
            mode=CompileMode.COMPILED if lowered.kernel is not None else CompileMode.LOWERED,
            passes=tuple(recorder.passes),
            source=_source_record(lowered, self.choice),
            layouts=recorder.layouts,
            launches=launches,
            launch_problems=_launch_problems(launches, self.choice),
            timings=TimingRecord(self.elaborate_s, lower_s, max(0.0, self.total_s - lower_s)),
            warnings=tuple(recorder.warnings),
            **self._base(),
        )

    def stage_after_elaborate(self) -> bool:
        return bool(self.cache_key)


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
    if not tl.is_kernel(kernel):
        raise TypeError(
            f"explore() needs a @tilelang.jit (or @tilelang.autotune) function or a PrimFunc, got {type(kernel).__name__}"
        )


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


def _source_record(lowered: tl.Lowered, choice: TargetChoice) -> SourceRecord:
    device, links = _strip_line_directives(lowered.device_source)
    kernel_file = _kernel_file(links)
    source = SourceRecord(
        device=device,
        host=lowered.host_source,
        language="cuda" if choice.is_cuda else "c",
        line_links=links,
        kernel_file=kernel_file,
        kernel_source="".join(linecache.getlines(kernel_file)) if kernel_file else "",
    )
    return with_source_map(source)


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


def _launch_problems(launches: tuple[LaunchRecord, ...], choice: TargetChoice) -> tuple[str, ...]:
    if not choice.is_cuda:
        return ()

    return tuple(launch_problems(launches, choice.arch))
