"""``%%tilelang --bench``: each compiled kernel timed where it runs, as a tuning sweep times a config.

A CUDA kernel is timed by CUDA events with the L2 flushed before each call and reported as the mean, a CPU kernel
(``target="c"``) by the wall clock and reported as the median, both with adaptive repetitions
(:func:`tilelab.tune.bench.measure`), on inputs made from its parameters (or an eager kernel's ``--args``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError

from tilelab.capture import kernel_target
from tilelab.errors import cannot_run
from tilelab.records import KernelRecord
from tilelab.targets import TargetChoice
from tilelab.tune.bench import measure, ready_to_time
from tilelab.tune.checks import call_args, device_of, short_error

__all__ = ["bench_lines", "refuse_unless_one_runs"]

Arguments = Callable[[str, Any], tuple[tuple, dict]]  # (name, kernel) -> its (args, kwargs)


def refuse_unless_one_runs(kernels: dict[str, Any], options: Any) -> None:
    """A usage error when none of ``kernels``, each compiled for its own target as the cell compiles it, can run here."""
    choices = [kernel_target(kernel, options.arch, options.target) for kernel in kernels.values()]
    if not any(choice.runnable for choice in choices):
        raise UsageError(str(cannot_run("--bench", choices[0])))


def bench_lines(records: list[KernelRecord], compiled: dict[str, Any], kernels: dict[str, Any], arguments: Arguments, options: Any) -> list[str]:
    """One line a kernel of the cell: its time per call and how it was taken, or why it was not timed."""
    lines = []
    for record in records:
        name, choice = record.name, kernel_target(kernels[record.name], options.arch, options.target)
        if not record.ok:
            lines.append(f"{name}: not timed: it did not compile ({record.error.message if record.error else 'no error recorded'})")
        elif not choice.runnable:
            lines.append(f"{name}: not timed: lowered for {choice.arch} only ({choice.lowered_because})")
        elif name not in compiled:
            lines.append(f"{name}: not timed: it compiled to no kernel that can be called")
        else:
            args, kwargs = arguments(name, kernels[name])
            lines.append(f"{name}: {_timed(kernels[name], compiled[name], args, kwargs, choice)}")
    return lines


def _timed(kernel: Any, jit_kernel: Any, args: tuple, kwargs: dict, choice: TargetChoice) -> str:
    try:
        device = device_of(choice)
        inputs = call_args(kernel, args, kwargs, jit_kernel, device)
        call = lambda: jit_kernel(*inputs)  # noqa: E731  (the one call the timer repeats)
        call()
        outcome = measure(ready_to_time(jit_kernel, call, device, choice.is_cuda))
    except Exception as exc:  # a kernel that fails when run is this line, not a traceback
        return f"not timed: {short_error(exc)}"
    if outcome.spread is None:
        return f"not timed: {outcome.error}"
    spread = outcome.spread
    how = "the mean, by CUDA events, the L2 flushed before each call" if choice.is_cuda else "the median, by the wall clock"
    return (
        f"{spread.latency_ms:.4f} ms per call ({how}; {spread.count:,} calls, "
        f"min {spread.min_ms:.4f}, p90 {spread.p90_ms:.4f} ms)"
    )
