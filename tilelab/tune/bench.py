"""Benchmark one compiled config in the parent: inputs, optional reference check, timing.

The parent compiles the config again with :func:`tilelab.tune.build.build`,
which hits the kernel cache a worker just filled, then times it with
``tilelang.profiler.do_bench`` (CUDA events on a GPU, ``backend="wall"`` on
the CPU). Inputs are made once per config from the kernel's parameters
(uniform in [-1, 1] for floats, small integers otherwise), or are the
caller's tensors for eager kernels.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from tilelab.tune.build import build

__all__ = ["BenchOutcome", "bench_config"]


@dataclass(frozen=True)
class BenchOutcome:
    status: str  # "ok", "run_error" or "mismatch"
    latency_ms: float | None
    error: str | None
    bench_s: float
    kernel: Any = None


def _device(choice: Any) -> Any:
    import torch

    return torch.device("cuda", torch.cuda.current_device()) if choice.is_cuda else torch.device("cpu")


def _inputs(jit_kernel: Any, device: Any) -> list[Any]:
    import torch

    out_idx = set(jit_kernel.out_idx or [])
    tensors = []
    for position, param in enumerate(jit_kernel.params):
        if position in out_idx:
            continue
        dtype = param.torch_dtype()
        shape = [int(s) for s in param.shape]
        if dtype.is_floating_point:
            tensors.append(torch.empty(shape, dtype=dtype, device=device).uniform_(-1.0, 1.0))
        elif dtype == torch.bool:
            tensors.append(torch.randint(0, 2, shape, device=device).to(torch.bool))
        else:
            tensors.append(torch.randint(-2, 3, shape, dtype=dtype, device=device))
    return tensors


def _call_args(kernel: Any, args: tuple, kwargs: dict, jit_kernel: Any, device: Any) -> list[Any]:
    if getattr(kernel, "mode", None) == "eager":
        _, tensor_args = kernel.func.parse_args(*args, **kwargs)
        return list(tensor_args.values())
    return _inputs(jit_kernel, device)


def _outputs(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _mismatch(outputs: list[Any], expected: list[Any], rtol: float, atol: float) -> str | None:
    import torch

    if len(outputs) != len(expected):
        return f"kernel returned {len(outputs)} outputs, reference {len(expected)}"
    for position, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        got, want = got.float().cpu(), torch.as_tensor(want).float().cpu()
        if got.shape != want.shape:
            return f"output {position}: shape {tuple(got.shape)} != reference {tuple(want.shape)}"
        if not torch.allclose(got, want, rtol=rtol, atol=atol):
            worst = (got - want).abs().max().item()
            return f"output {position} differs from the reference (max abs diff {worst:.3g})"
    return None


def _short(exc: BaseException) -> str:
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:300]


def bench_config(
    kernel: Any,
    args: tuple,
    kwargs: dict,
    choice: Any,
    reference: Any = None,
    rtol: float = 1e-2,
    atol: float = 1e-2,
) -> BenchOutcome:
    """Compile (cache hit) and time one config; failures come back as outcomes, not exceptions."""
    from tilelang.profiler import do_bench

    started = time.perf_counter()
    try:
        jit_kernel = build(kernel, args, kwargs, choice)
    except Exception as exc:  # compiled in a worker but not here: still only this config's row
        return BenchOutcome("compile_error", None, _short(exc), time.perf_counter() - started)
    device = _device(choice)
    try:
        ins = _call_args(kernel, args, kwargs, jit_kernel, device)
        outputs = _outputs(jit_kernel(*ins))
        if reference is not None:
            problem = _mismatch(outputs, _outputs(reference(*ins)), rtol, atol)
            if problem:
                return BenchOutcome("mismatch", None, problem, time.perf_counter() - started, jit_kernel)
        if choice.is_cuda:
            latency = do_bench(lambda: jit_kernel(*ins), warmup=25, rep=100)
        else:
            latency = do_bench(lambda: jit_kernel(*ins), warmup=5, rep=50, backend="wall", return_mode="median")
    except Exception as exc:  # a kernel that fails at run time is a row, not the end of the sweep
        return BenchOutcome("run_error", None, _short(exc), time.perf_counter() - started)
    return BenchOutcome("ok", float(latency), None, time.perf_counter() - started, jit_kernel)
