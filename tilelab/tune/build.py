"""Compile one config of a sweep, the same way in a worker and in the parent.

Workers and the parent both call :func:`build`: the same elaboration, target,
``out_idx``, backend and pass configs give the same TileLang kernel-cache key,
so the parent's compile of a config a worker compiled is a disk-cache hit (a
few milliseconds) rather than a second nvcc run.

:class:`KernelSpec` is how a kernel travels to a worker: the undecorated
Python function, pickled with ``cloudpickle`` (a TileLang dependency) by value
when it lives in a notebook cell or ``__main__``, plus the text of the file or
cell that defined it. TileLang re-reads a kernel's source through ``inspect``
(the ``@T.prim_func`` parser and ``@tilelang.jit`` both do), so the worker puts
that text into ``linecache`` under the original file name before unpickling;
line numbers in errors then still point at the user's cell.
"""

from __future__ import annotations

import linecache
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["KernelSpec", "TensorShape", "build", "kernel_name", "kernel_source", "spec_of"]

_JIT_OPTIONS = ("out_idx", "execution_backend", "target", "target_host", "verbose", "pass_configs", "compile_flags")


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

    def load(self) -> Any:
        """Rebuild the kernel: the ``@tilelang.jit`` object, or the plain function."""
        import cloudpickle

        for filename, lines in self.files.items():
            linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
        function = cloudpickle.loads(self.function)
        if self.jit_options is None:
            return function
        import tilelang

        return tilelang.jit(**self.jit_options)(function)


def _undecorated(kernel: Any) -> Any:
    inner = getattr(kernel, "func", None)
    return getattr(inner, "orig_func", None) or kernel


def spec_of(kernel: Any) -> KernelSpec:
    """Describe ``kernel`` (a ``@tilelang.jit`` function or a PrimFunc factory) for workers."""
    import cloudpickle

    function = _undecorated(kernel)
    if not callable(function) or not hasattr(function, "__code__"):
        raise TypeError(f"tune() needs a @tilelang.jit function or a function returning a PrimFunc, got {type(kernel).__name__}")
    if "<locals>" in function.__qualname__:
        raise TypeError(f"{function.__qualname__} is defined inside a function; define the kernel at the top level of its cell or module")
    options = None
    if function is not kernel:
        options = {name: getattr(kernel, name) for name in _JIT_OPTIONS}
    filename = function.__code__.co_filename
    files = {}
    if not Path(filename).is_file():
        lines = linecache.getlines(filename)
        if not lines:
            raise TypeError(f"the source of {function.__qualname__} ({filename}) is not available to compile workers")
        files[filename] = lines
    try:
        pickled = cloudpickle.dumps(function)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise TypeError(f"cannot send {function.__qualname__} to compile workers: a global it uses cannot be pickled ({exc})") from None
    return KernelSpec(pickled, options, files)


def kernel_name(kernel: Any) -> str:
    """The kernel's Python name."""
    return getattr(_undecorated(kernel), "__name__", type(kernel).__name__)


def kernel_source(kernel: Any) -> str:
    """The source text of the kernel's definition (what the history is keyed on)."""
    import inspect

    function = _undecorated(kernel)
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return function.__code__.co_code.hex()


def _is_jit(kernel: Any) -> bool:
    return hasattr(kernel, "get_tir") and hasattr(kernel, "out_idx")


def elaborate(kernel: Any, args: tuple, kwargs: dict, target: Any) -> Any:
    """The PrimFunc of one config, elaborated under ``target``."""
    args = tuple(a.meta() if isinstance(a, TensorShape) else a for a in args)
    with target:
        if _is_jit(kernel):
            return kernel.get_tir(*args, **kwargs)
        return kernel(*args, **kwargs)


def _copied(out_idx: Any) -> Any:
    return list(out_idx) if isinstance(out_idx, (list, tuple)) else out_idx


def build(kernel: Any, args: tuple, kwargs: dict, choice: Any) -> Any:
    """Elaborate and compile one config for ``choice`` (a ``tilelab.targets.TargetChoice``).

    Returns the ``JITKernel`` when the target can run, else the lowered artifact.
    """
    import tilelang

    target = choice.tvm_target()
    func = elaborate(kernel, args, kwargs, target)
    options = {"out_idx": None, "execution_backend": None, "pass_configs": None, "compile_flags": None}
    if _is_jit(kernel):
        options = {name: getattr(kernel, name) for name in options}
        # tilelang normalises out_idx in place ([-1] -> [2]) when it loads a kernel from its disk
        # cache, which would change every later cache key in this process: hand it a copy.
        options["out_idx"] = _copied(options["out_idx"])
        if func.attrs and "tilelang_out_idx" in func.attrs:
            options["out_idx"] = None
    if choice.runnable:
        return tilelang.compile(func, target=target, **options)
    # tilelang.compile merges a kernel's own T.annotate_pass_configs; lowering alone must too.
    configs = dict(func.attrs["tilelang_pass_configs"]) if func.attrs and "tilelang_pass_configs" in func.attrs else {}
    configs.update(options["pass_configs"] or {})
    with tilelang.transform.PassContext(opt_level=3, config=configs), target:
        return tilelang.lower(func, target=target, enable_device_compile=False)
