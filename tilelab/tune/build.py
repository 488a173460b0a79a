"""Compile one config of a sweep, the same way in a worker and in the parent.

Workers and the parent both call :func:`build`: the same elaboration, target,
``out_idx``, backend and pass configs give the same TileLang kernel-cache key,
so the parent's compile of a config a worker compiled is a disk-cache hit (a
few milliseconds) rather than a second nvcc run.

:class:`KernelSpec` is how a kernel travels to a worker: the undecorated
Python function, pickled with ``cloudpickle`` (a TileLang dependency) by value
when it lives in a notebook cell or ``__main__``, plus its file name and the
text of the file or cell that defined it. TileLang re-reads a kernel's source
through ``inspect`` (the ``@T.prim_func`` parser and ``@tilelang.jit`` both do),
so the worker puts that text into ``linecache`` under the original file name and
gives the function's code objects that file name back itself: what a serializer
does with file names (cloudpickle 3.1.3 writes ``<dynamic-code>``) cannot matter.
Line numbers in errors then still point at the user's cell.
"""

from __future__ import annotations

import importlib
import inspect
import linecache
import pickle
import re
import sys
import time
import types
from dataclasses import dataclass, field
from typing import Any

import cloudpickle

from tilelab import _tilelang as tl
from tilelab.machine.occupancy import launch_problems
from tilelab.provenance import Provenance, build_provenance
from tilelab.records import LaunchRecord

__all__ = [
    "BuildTrace",
    "KernelSpec",
    "TensorShape",
    "build",
    "kernel_name",
    "kernel_source",
    "launch_problems_of",
    "launches_of",
    "spec_of",
]


@dataclass(frozen=True)
class TensorShape:
    """A tensor argument sent to workers as shape and dtype only; rebuilt there on ``meta``."""

    shape: tuple[int, ...]
    dtype: str

    def meta(self):
        import torch

        return torch.empty(self.shape, dtype=getattr(torch, self.dtype.replace("torch.", "")), device="meta")


@dataclass
class KernelSpec:
    """A kernel as a worker can rebuild it."""

    function: bytes  # cloudpickle of the undecorated function
    jit_options: dict[str, Any] | None  # None: a plain function returning a PrimFunc
    files: dict[str, list[str]] = field(default_factory=dict)  # source lines not on disk, by file name
    modules: dict[str, str] = field(default_factory=dict)  # global name -> module, for string annotations
    filename: str = ""  # where the function was defined (a file, or a cell's name in linecache)

    def load(self) -> Any:
        """Rebuild the kernel: the ``@tilelang.jit`` object, or the plain function."""
        for filename, lines in self.files.items():
            linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
        function = cloudpickle.loads(self.function)
        if self.filename and isinstance(function, types.FunctionType) and function.__code__.co_filename != self.filename:
            function.__code__ = with_filename(function.__code__, self.filename)
        # TileLang evaluates string annotations in the globals of the function's module by name:
        # for a function of ``__main__`` that is the worker's own ``__main__``.
        home = sys.modules.get(function.__module__)
        for namespace in (function.__globals__, getattr(home, "__dict__", None) if function.__module__ == "__main__" else None):
            for name, module in self.modules.items() if namespace is not None else ():
                namespace.setdefault(name, importlib.import_module(module))
        if self.jit_options is None:
            return function
        import tilelang

        return tilelang.jit(**self.jit_options)(function)


def spec_of(kernel: Any) -> KernelSpec:
    """Describe ``kernel`` (a ``@tilelang.jit`` / ``@tilelang.autotune`` function, or a PrimFunc factory) for workers.

    An ``@autotune`` kernel travels as its ``@jit``: the sweep itself supplies the configs.
    """
    function = tl.python_function(kernel)
    if not callable(function) or not hasattr(function, "__code__"):
        raise TypeError(f"tune() needs a @tilelang.jit function or a function returning a PrimFunc, got {type(kernel).__name__}")
    if "<locals>" in function.__qualname__:
        raise TypeError(f"{function.__qualname__} is defined inside a function; define the kernel at the top level of its cell or module")
    options = tl.jit_options(kernel)
    filename = function.__code__.co_filename
    lines = linecache.getlines(filename)  # sent even when on disk here: a worker's host may not have the file
    if not lines:
        raise TypeError(f"the source of {function.__qualname__} ({filename}) is not available to compile workers")
    files = {filename: lines}
    try:
        pickled = cloudpickle.dumps(function)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise TypeError(f"cannot send {function.__qualname__} to compile workers: a global it uses cannot be pickled ({exc})") from None
    return KernelSpec(pickled, options, files, _named_modules(function), filename)


def with_filename(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` and every code object nested in it (inner functions, comprehensions) with ``co_filename`` set."""
    constants = tuple(with_filename(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=constants)


def _named_modules(function: Any) -> dict[str, str]:
    """The modules among ``function``'s globals that its source names (``T``, ``C``, ...).

    A function sent by value (from ``__main__`` or a notebook cell) keeps only the globals its
    code refers to; names used only in string annotations (``from __future__ import annotations``,
    which TileLang evaluates in the function's globals) would be missing in the worker.
    """
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return {}
    named = set(re.findall(r"\b([A-Za-z_]\w*)\s*\.", source))
    return {
        name: value.__name__
        for name, value in function.__globals__.items()
        if name in named and isinstance(value, types.ModuleType)
    }


def kernel_name(kernel: Any) -> str:
    """The kernel's Python name."""
    return tl.kernel_name(kernel)


def kernel_source(kernel: Any) -> str:
    """The source text of the kernel's definition (what the history is keyed on)."""
    function = tl.python_function(kernel)
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return function.__code__.co_code.hex()


@dataclass
class BuildTrace:
    """What one :func:`build` learned of its compile, also when it failed: who served it, TileLang's key, the source."""

    source: tuple[str, str, int, int] | None = None  # tilelab._tilelang.kernel_source_lines
    key: Any = None  # tilelab._tilelang.CacheKey; None before elaboration finished
    served_by: str = "fresh"  # "memory", "disk" or "fresh" (a lowering is always fresh)
    seconds: float | None = None
    in_disk_cache: bool = False

    def provenance(self) -> Provenance:
        return build_provenance(self.served_by, self.seconds, self.key, self.source, self.in_disk_cache)

    def columns(self) -> dict[str, Any]:
        """The tuning row's provenance columns (:data:`tilelab.provenance.PROVENANCE_COLUMNS`)."""
        return self.provenance().columns()


def build(kernel: Any, args: tuple, kwargs: dict, choice: Any, trace: BuildTrace | None = None) -> Any:
    """Elaborate and compile one config for ``choice`` (a ``tilelab.targets.TargetChoice``).

    Returns the ``JITKernel`` when the target can run (through TileLang's kernel
    cache), else the lowered :class:`tilelab._tilelang.Lowered`. ``trace``, when
    given, learns who served the compile and TileLang's key for it.
    """
    args = tuple(a.meta() if isinstance(a, TensorShape) else a for a in args)
    if trace is not None:
        trace.source = tl.kernel_source_lines(kernel)
    func, options = tl.elaborate(kernel, args, kwargs, choice.tvm_target())
    if trace is None:
        return tl.compile_cached(func, options, choice) if choice.runnable else tl.lower(func, options, choice)
    if choice.runnable:
        built, outcome = tl.compile_traced(func, options, choice)
        trace.key, trace.served_by, trace.seconds, trace.in_disk_cache = outcome.key, outcome.served_by, outcome.seconds, outcome.in_disk_cache
        return built
    trace.key = tl.cache_key_or_none(func, options, choice)
    started = time.perf_counter()
    lowered = tl.lower(func, options, choice)
    trace.seconds = time.perf_counter() - started
    return lowered


def launches_of(built: Any, choice: Any) -> list[Any]:
    """The :class:`~tilelab.records.LaunchRecord` of every device kernel of a built CUDA config ([] otherwise)."""
    if not choice.is_cuda:
        return []

    device_mod = tl.device_module(built)
    if device_mod is None:
        return []
    return [LaunchRecord(**launch) for launch in tl.launches(device_mod)]


def launch_problems_of(built: Any, choice: Any, launches: list[Any] | None = None) -> list[str]:
    """Why a built config cannot launch on ``choice``'s arch (threads, shared memory), from its device module."""

    launches = launches_of(built, choice) if launches is None else launches
    return launch_problems(launches, choice.arch) if launches else []
