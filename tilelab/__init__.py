"""TileLab: a Jupyter workbench for writing, inspecting and tuning TileLang kernels.

``import tilelab`` stays cheap: tilelang, torch, IPython and ipywidgets are
imported only where they are used.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "choices",
    "compare",
    "explore",
    "load_ipython_extension",
    "place",
    "tune",
    "tuning_history",
    "unload_ipython_extension",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext tilelab``: register ``%%tilelang`` / ``%tilelang`` and the panel bridge."""
    from tilelab.magic import load_extension

    load_extension(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from tilelab.magic import unload_extension

    unload_extension(ipython)


def explore(kernel: Any, *args: Any, arch: str | None = None, target: Any = None, **kwargs: Any):
    """Compile ``kernel`` with its passes recorded and return a :class:`~tilelab.records.KernelRecord`.

    Parameters
    ----------
    kernel
        A ``@tilelang.jit`` function (classic: returns a ``@T.prim_func``; eager:
        ``T.Tensor`` annotations) or a bare ``PrimFunc``.
    *args, **kwargs
        What the kernel is elaborated with: Python parameters for classic kernels,
        tensors (``torch.empty(..., device="meta")`` or :func:`place`) for eager ones.
    arch
        Without a GPU, the CUDA architecture to lower for (default ``sm_90``).
    target
        An explicit target (``"c"`` for CPU kernels, a TVM target or its dict).

    Raises
    ------
    tilelab.errors.KernelCompileError
        When the kernel fails to elaborate or lower; ``.record`` holds the failed record.
    """
    from tilelab.capture import explore as _explore

    return _explore(kernel, *args, arch=arch, target=target, **kwargs)


def place(*shape: int, dtype: Any = None):
    """A shape placeholder for eager kernels: a ``meta`` tensor, no memory allocated."""
    from tilelab.capture import place as _place

    return _place(*shape, dtype=dtype)


def compare(record_a: Any, record_b: Any, **kwargs: Any):
    """Show the same passes of two records side by side."""
    from tilelab.views.compare import CompareView

    return CompareView(record_a, record_b, **kwargs)


def choices(values: Any):
    """Mark a keyword argument of :func:`tune` as swept over ``values``."""
    from tilelab.tune.space import choices as _choices

    return _choices(values)


def tune(kernel: Any, *args: Any, **kwargs: Any):
    """Compile and benchmark every config of a space; returns a ``TuneResult`` with all rows."""
    from tilelab.tune.api import tune as _tune

    return _tune(kernel, *args, **kwargs)


def tuning_history(kernel: Any = None, **kwargs: Any):
    """Past tuning rows from the SQLite history as a pandas DataFrame."""
    from tilelab.tune.store import tuning_history as _history

    return _history(kernel, **kwargs)
