"""What one sweep needs besides its result, and the setup message its compile workers receive."""

from __future__ import annotations

import pickle
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tilelab.tune.bench import Timer
from tilelab.tune.build import KernelSpec, TensorShape
from tilelab.tune.result import TuneRow

__all__ = ["Sweep", "setup_message", "shipped"]


@dataclass
class Sweep:
    """Everything one sweep needs besides its result."""

    kernel: Any
    spec: KernelSpec
    args: tuple
    fixed: dict[str, Any]
    choice: Any  # tilelab.targets.TargetChoice
    timeout: float = 120.0
    workers: int | None = None
    reference: Callable | None = None
    rtol: float = 1e-2
    atol: float = 1e-2
    flops: float | Callable[[dict], float] | None = None
    bytes: float | Callable[[dict], float] | None = None
    int_params: frozenset[str] = frozenset()  # the kernel's parameters that take an int (for error messages)
    resources: bool = True  # machine-code columns for CUDA configs (nvcc, or the cubin TileLang built)
    prune: bool = False  # stop a benchmark whose first calls are over twice the best so far
    rebench: int = 3  # the top configs benchmarked again, interleaved, at the end
    timer: Timer | None = None  # times calls instead of CUDA events / the wall clock (tune()'s ``timer``)
    started: float = field(default_factory=time.monotonic)  # the tune() call: the timeline's zero
    deadline: float | None = None  # monotonic time after which no new config starts (a wall-clock budget)
    on_row: list[Callable[[TuneRow], None]] = field(default_factory=list)
    on_progress: list[Callable[[], None]] = field(default_factory=list)


def shipped(value: Any) -> Any:
    """An argument as compile workers receive it: a tensor as its shape and dtype, anything else as is."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None and hasattr(value, "device"):
        return TensorShape(tuple(int(s) for s in shape), str(dtype))
    return value


def setup_message(sweep: Sweep, sweep_id: str) -> bytes:
    """The length-prefixed pickle a compile worker reads to serve ``sweep`` (its answers echo ``sweep_id``)."""
    setup = {
        "spec": sweep.spec,
        "args": tuple(shipped(a) for a in sweep.args),
        "fixed": {k: shipped(v) for k, v in sweep.fixed.items()},
        "choice": sweep.choice,
        "sys_path": [p for p in sys.path if p],
        "resources": sweep.resources,
        "sweep": sweep_id,  # echoed in the worker's answers: a pooled worker's stale answer is told apart
    }
    payload = pickle.dumps(setup, protocol=pickle.HIGHEST_PROTOCOL)
    return len(payload).to_bytes(4, "big") + payload
