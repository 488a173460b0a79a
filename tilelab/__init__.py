"""TileLab: a Jupyter workbench for writing, inspecting and tuning TileLang kernels.

``import tilelab`` stays cheap: tilelang, torch, IPython and ipywidgets are
imported only where they are used.
"""

from __future__ import annotations

from typing import Any

from tilelab.version import __version__

__all__ = [
    "__version__",
    "choices",
    "compare",
    "explore",
    "load",
    "load_ipython_extension",
    "place",
    "profile",
    "to_html",
    "tune",
    "tuning_history",
    "unload_ipython_extension",
    "why",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext tilelab``: register ``%%tilelang`` / ``%tilelang`` and the panel bridge."""
    from tilelab.magic import load_extension

    load_extension(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from tilelab.magic import unload_extension

    unload_extension(ipython)


def explore(kernel: Any, *args: Any, **options: Any):
    """Compile ``kernel`` with its passes recorded and return a :class:`~tilelab.records.KernelRecord`.

    Parameters
    ----------
    kernel
        A ``@tilelang.jit`` function (classic: returns a ``@T.prim_func``; eager:
        ``T.Tensor`` annotations) or a bare ``PrimFunc``.
    *args, **options
        What the kernel is elaborated with: Python parameters for classic kernels,
        tensors (``torch.empty(..., device="meta")`` or :func:`place`) for eager ones;
        and these keywords of TileLab's own:
    arch
        Without a GPU, the CUDA architecture to lower for (default ``sm_90``).
    target
        An explicit target (``"c"`` for CPU kernels, a TVM target or its dict).
        With neither ``arch`` nor ``target``, a kernel whose ``@tilelang.jit``
        names a CPU target (``"c"``, ``"llvm"``) compiles for it, as TileLang does.
    machine_code
        Also build the CUDA's PTX, SASS, resources and occupancy with nvcc
        (``record.machine_code``; about 2 s; a note when nvcc is missing).
        An ``@tilelang.autotune`` kernel is explored with the config values
        given as keywords, the rest from its first config (a warning says so).
    timeout
        Seconds the kernel may take to elaborate and lower (default 600); past
        them the compile stops and fails with one message. ``None``: no limit.
        The limit needs the main thread (as Ctrl-C does); elsewhere there is none.

    Raises
    ------
    tilelab.errors.KernelCompileError
        When the kernel fails to elaborate or lower, or runs past ``timeout``;
        ``.record`` holds the failed record.
    ValueError
        When ``timeout`` is not a positive number (or None).
    """
    from tilelab.capture import explore as _explore
    from tilelab.display import ensure_registered

    ensure_registered()
    return _explore(kernel, *args, **options)


def place(*shape: int, dtype: Any = None):
    """A shape placeholder for eager kernels: a ``meta`` tensor, no memory allocated."""
    from tilelab.capture import place as _place

    return _place(*shape, dtype=dtype)


def compare(record_a: Any, record_b: Any, **kwargs: Any):
    """Show the same passes of two records side by side."""
    from tilelab.views.compare import CompareView

    return CompareView(record_a, record_b, **kwargs)


def load(path: Any):
    """The :class:`~tilelab.records.KernelRecord` that ``record.save(path)`` wrote."""
    from tilelab.display import ensure_registered
    from tilelab.sharing import load as _load

    ensure_registered()
    return _load(path)


def to_html(obj: Any) -> str:
    """The static, script-free HTML snapshot of a record, comparison, tuning result or view."""
    from tilelab.sharing import to_html as _to_html

    return _to_html(obj)


def profile(kernel: Any, *inputs: Any, **kwargs: Any):
    """Run a compiled kernel once under Nsight Compute; its counters as a pandas DataFrame (see ``tilelab.counters.ncu``)."""
    from tilelab.counters.ncu import profile as _profile

    return _profile(kernel, *inputs, **kwargs)


def choices(values: Any):
    """Mark a keyword argument of :func:`tune` as swept over ``values``."""
    from tilelab.tune.space import choices as _choices

    return _choices(values)


def tune(kernel: Any, *args: Any, **kwargs: Any):
    """Compile and benchmark every config of a space; returns a ``TuneResult`` with all rows."""
    from tilelab.display import ensure_registered
    from tilelab.tune.api import tune as _tune

    ensure_registered()
    return _tune(kernel, *args, **kwargs)


def tuning_history(kernel: Any = None, **kwargs: Any):
    """Past tuning rows from the SQLite history as a pandas DataFrame."""
    from tilelab.tune.store import tuning_history as _history

    return _history(kernel, **kwargs)


def why(record_a: Any, record_b: Any):
    """Why ``record_b`` recompiled after ``record_a``: which components of TileLang's cache key changed.

    Returns a :class:`~tilelab.recompiled.WhyRecompiled` (``.changes``, ``.text()``);
    see :func:`tilelab.recompiled.why`.
    """
    from tilelab.recompiled import why as _why

    return _why(record_a, record_b)
