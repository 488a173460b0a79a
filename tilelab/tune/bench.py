"""Benchmark one compiled config in the parent: inputs, the reference check once, timing.

:func:`prepare` compiles the config again with :func:`tilelab.tune.build.build`
(a hit in the kernel cache a worker just filled), makes its inputs, calls it
once and compares that call's outputs with ``reference``: once per config,
never per repetition. :func:`measure` then times it as
``tilelang.profiler.do_bench`` does (on a GPU: CUDA events, the L2 flushed
before each call, 25 ms of warm-up and up to 100 ms of repetitions; on the CPU:
wall clock, 5 ms and 50 ms) but keeps every repetition, so a row has its spread
(min, median, p90, std) and the 95 % interval of the median (its noise band,
:func:`tilelab.tune.noise.median_interval`) besides ``latency_ms`` (the mean
on a GPU, the median on the CPU, as ``do_bench`` reports them). Repetitions
are adaptive: they come in rounds and stop when the noise band is within 1 %
of the median. The first 5 calls estimate the time; when their median is over
``stop_above`` (twice the best so far) the benchmark stops there and the row is
``pruned``. Inputs are made once per config (:mod:`tilelab.tune.checks`).

A ``timer`` (``timer(config, calls) -> times in ms``, :func:`tilelab.tune`'s
documented hook) replaces how calls are timed: the kernel is still built, run
once and checked, but its repetitions are the timer's answers.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tilelab.tune.build import build
from tilelab.tune.checks import call_args, device_of, mismatch, outputs_of, short_error
from tilelab.tune.noise import median_interval

__all__ = [
    "EARLY_STOP_FACTOR",
    "MAX_ROUNDS",
    "PROBE_CALLS",
    "TIGHT",
    "BenchOutcome",
    "Prepared",
    "Spread",
    "Timer",
    "measure",
    "prepare",
    "ready_to_time",
    "release_buffers",
    "spread_of",
]

Timer = Callable[[dict, int], Sequence[float]]  # (the config's keyword arguments, calls) -> each call's time in ms
PROBE_CALLS = 5  # calls that estimate a kernel's time, and decide an early stop
EARLY_STOP_FACTOR = 2.0  # a benchmark stops when its probe calls are this many times slower than the best so far
TIGHT = 0.01  # repetitions stop when the median's 95 % interval is this narrow (relative to the median)
MAX_ROUNDS = 6  # rounds of repetitions at most, each a quarter of the usual budget
_GPU_MS = (25.0, 100.0)  # warm-up and repetitions, as do_bench's defaults
_CPU_MS = (5.0, 50.0)
_FLUSH_BYTES = 256 * 1024 * 1024  # do_bench's L2 flush buffer


@dataclass(frozen=True)
class Spread:
    """Summary of the repetitions of one benchmark, in milliseconds."""

    latency_ms: float  # what do_bench would report: the mean on a GPU, the (low) median on the CPU
    min_ms: float
    median_ms: float
    p90_ms: float
    std_ms: float
    count: int
    low_ms: float  # the 95 % interval of the median: the noise band
    high_ms: float


def spread_of(samples: list[float], mean: bool) -> Spread:
    """The spread of ``samples``; ``latency_ms`` is their mean (``mean=True``) or low median."""
    ordered = sorted(samples)
    position = 0.9 * (len(ordered) - 1)
    lower = int(position)
    upper = min(lower + 1, len(ordered) - 1)
    p90 = ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)
    latency = statistics.fmean(ordered) if mean else statistics.median_low(ordered)
    std = statistics.pstdev(ordered) if len(ordered) > 1 else 0.0
    low, high = median_interval(ordered)
    return Spread(latency, ordered[0], statistics.median(ordered), p90, std, len(ordered), low, high)


@dataclass(frozen=True)
class BenchOutcome:
    status: str  # "ok", "run_error", "mismatch" or "pruned"
    latency_ms: float | None
    error: str | None
    bench_s: float
    kernel: Any = None
    spread: Spread | None = None
    method: str | None = None  # how the calls were timed: "cuda events", "wall" or "timer <name>"


def _cpu_sampler(call: Callable[[], Any]) -> Callable[[int], list[float]]:
    def samples(count: int) -> list[float]:
        times = []
        for _ in range(count):
            started = time.perf_counter()
            call()
            times.append((time.perf_counter() - started) * 1e3)
        return times

    return samples


_flush_buffers: dict[str, Any] = {}  # one L2 flush buffer per device, shared by the configs a sweep keeps prepared


def _flush_buffer(device: Any) -> Any:
    import torch

    if str(device) not in _flush_buffers:
        _flush_buffers[str(device)] = torch.empty(_FLUSH_BYTES // 4, dtype=torch.int, device=device)
    return _flush_buffers[str(device)]


def release_buffers() -> None:
    """Free the L2 flush buffers (the end of a sweep: 256 MB of device memory each)."""
    _flush_buffers.clear()


def _gpu_sampler(call: Callable[[], Any], device: Any) -> Callable[[int], list[float]]:
    import torch

    flush = _flush_buffer(device)

    def samples(count: int) -> list[float]:
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(count)]
        for start, end in events:
            flush.zero_()
            start.record()
            call()
            end.record()
        torch.cuda.synchronize(device)
        return [start.elapsed_time(end) for start, end in events]

    return samples


def _timer_sampler(timer: Timer, kwargs: dict) -> Callable[[int], list[float]]:
    return lambda count: [float(value) for value in timer(dict(kwargs), count)]


@dataclass
class Prepared:
    """A config ready to time: built (a kernel-cache hit), inputs made, run once and checked.

    ``sample(n)`` returns the times (ms) of ``n`` calls; ``method`` says how they are taken.
    Kept by the runner for the top configs, so a confirmation or the final re-benchmark
    times the same kernel on the same inputs without building or checking it again.
    """

    kernel: Any
    call: Callable[[], Any]
    sample: Callable[[int], list[float]]
    method: str  # "cuda events", "wall" or "timer <name>"
    is_cuda: bool
    injected: bool = False  # the times come from a ``timer``: no warm-up calls of the kernel

    def measure(self, stop_above: float | None = None) -> tuple[list[float], bool]:
        """Every repetition's time (ms), and whether it stopped after the probe calls.

        Repetitions come in rounds of a quarter of the usual budget (100 ms on a GPU,
        50 ms on the CPU) and stop once the median's 95 % interval is within
        :data:`TIGHT` of it (after two rounds), or after :data:`MAX_ROUNDS` rounds.
        """
        warmup_ms, repeat_ms = _GPU_MS if self.is_cuda else _CPU_MS
        probes = self.sample(PROBE_CALLS)
        estimate = max(statistics.median(probes), 1e-6)
        if stop_above is not None and estimate > stop_above:
            return probes, True
        for _ in range(0 if self.injected else int(warmup_ms / estimate)):
            self.call()
        calls, samples = max(1, int(repeat_ms / 4 / estimate)), []
        for round_number in range(MAX_ROUNDS):
            samples += self.sample(calls)
            if round_number >= 1 and _tight(samples):
                break
        return samples, False


def _tight(samples: list[float]) -> bool:
    low, high = median_interval(samples)
    return high - low <= TIGHT * statistics.median(samples)


def prepare(
    kernel: Any,
    args: tuple,
    kwargs: dict,
    choice: Any,
    reference: Any = None,
    rtol: float = 1e-2,
    atol: float = 1e-2,
    timer: Timer | None = None,
) -> Prepared | BenchOutcome:
    """Build (cache hit), make inputs, call once and check against ``reference``: a :class:`Prepared`,
    or the failed :class:`BenchOutcome` (``compile_error``, ``run_error``, ``mismatch``)."""
    started = time.perf_counter()
    try:
        jit_kernel = build(kernel, args, kwargs, choice)
    except Exception as exc:  # compiled in a worker but not here: still only this config's row
        return BenchOutcome("compile_error", None, short_error(exc), time.perf_counter() - started)
    try:
        device = device_of(choice)
        ins = call_args(kernel, args, kwargs, jit_kernel, device)
        outputs = outputs_of(jit_kernel(*ins))
        if reference is not None:
            problem = mismatch(outputs, outputs_of(reference(*ins)), rtol, atol)
            if problem:
                return BenchOutcome("mismatch", None, problem, time.perf_counter() - started, jit_kernel)
        call = lambda: jit_kernel(*ins)  # noqa: E731  (the one call every sampler times)
        if timer is not None:
            name = getattr(timer, "__name__", type(timer).__name__)
            return Prepared(jit_kernel, call, _timer_sampler(timer, kwargs), f"timer {name}", choice.is_cuda, injected=True)
        return ready_to_time(jit_kernel, call, device, choice.is_cuda)
    except Exception as exc:  # a kernel that fails at run time is a row, not the end of the sweep
        return BenchOutcome("run_error", None, short_error(exc), time.perf_counter() - started)


def ready_to_time(jit_kernel: Any, call: Callable[[], Any], device: Any, is_cuda: bool) -> Prepared:
    """``call`` (one call of ``jit_kernel`` on its inputs, made once already) ready for :func:`measure`: timed by CUDA
    events with the L2 flushed before each call on ``device``, or by the wall clock on the CPU."""
    if is_cuda:
        import torch

        torch.cuda.synchronize(device)
        return Prepared(jit_kernel, call, _gpu_sampler(call, device), "cuda events", True)
    return Prepared(jit_kernel, call, _cpu_sampler(call), "wall", False)


def measure(prepared: Prepared, best_so_far: float | None = None) -> BenchOutcome:
    """Time a prepared config; ``best_so_far`` (ms): stop after the probe calls when their median is over
    :data:`EARLY_STOP_FACTOR` times it (a ``pruned`` outcome, with why)."""
    started = time.perf_counter()
    stop_above = None if best_so_far is None else EARLY_STOP_FACTOR * best_so_far
    try:
        samples, stopped = prepared.measure(stop_above)
    except Exception as exc:  # a kernel that fails at run time is a row, not the end of the sweep
        return BenchOutcome("run_error", None, short_error(exc), time.perf_counter() - started)
    if not samples or not all(math.isfinite(value) for value in samples):
        return BenchOutcome("run_error", None, "the timer returned a non-finite time", time.perf_counter() - started)
    spread = spread_of(samples, mean=prepared.is_cuda)
    if stopped:
        why = (
            f"stopped early: the first {len(samples)} calls took {spread.median_ms:.4g} ms (median), "
            f"over {EARLY_STOP_FACTOR:g}× the best so far ({best_so_far:.4g} ms)"
        )
        return BenchOutcome("pruned", spread.latency_ms, why, time.perf_counter() - started, None, spread, prepared.method)
    return BenchOutcome("ok", spread.latency_ms, None, time.perf_counter() - started, prepared.kernel, spread, prepared.method)

