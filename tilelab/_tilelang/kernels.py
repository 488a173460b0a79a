"""What a kernel is (``@jit``, ``@autotune``, eager, a bare PrimFunc), its configs, and how one call elaborates."""

from __future__ import annotations

import linecache
from dataclasses import dataclass, field
from typing import Any

JIT_OPTION_NAMES = ("out_idx", "execution_backend", "target", "target_host", "verbose", "pass_configs", "compile_flags")
HOST_TARGETS = ("c", "llvm")  # the target kinds whose kernels run on the CPU, as host functions
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


def declared_host_target(kernel: Any) -> str | None:
    """``"c"`` or ``"llvm"`` where the kernel's own ``@tilelang.jit(target=...)`` names a CPU target; else None."""
    declared = getattr(jit_impl(kernel), "target", None)
    return declared.lower() if isinstance(declared, str) and declared.lower() in HOST_TARGETS else None


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
