"""One row of a sweep: one config, its status, timings and throughput.

A :class:`TuneRow` is data: the spread of its repetitions, its machine-code
columns (CUDA), who served its compile and, in a search, its trial number and
who chose it. :class:`tilelab.tune.result.TuneResult` collects the rows of a sweep.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

RESOURCE_COLUMNS = ("registers", "spills", "shared_bytes", "occupancy", "launchable")
SPREAD_COLUMNS = ("latency_min_ms", "latency_median_ms", "latency_p90_ms", "latency_std_ms")
ROOFLINE_COLUMNS = ("roofline_ms", "roofline_pct")
TRUST_COLUMNS = ("timing", "noise_low_ms", "noise_high_ms", "first_ms")


class TuneStatus(str, Enum):
    """How far one config got."""

    OK = "ok"
    COMPILE_ERROR = "compile_error"
    CANNOT_LAUNCH = "cannot_launch"  # over the arch's limits (threads, shared memory, registers): never benchmarked
    PRUNED = "pruned"  # its first repetitions were over twice the best so far: the benchmark stopped early
    RUN_ERROR = "run_error"
    MISMATCH = "mismatch"
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # the compile worker died: the run failed, not (necessarily) the config
    WORKER_LOST = "worker_lost"  # a cluster worker went away mid-task: retried once elsewhere; the run failed
    COMPILED = "compiled"  # compiled, not yet benchmarked (the sweep was interrupted)


def best_rank(latency_ms: float | None, rebench_ms: float | None) -> tuple[bool, float]:
    """How a timed ``ok`` row ranks for "best", smallest first: rows benchmarked again at the end of
    their sweep come before the others, each by its own time (the re-benchmark, else the latency)."""
    return (rebench_ms is None, latency_ms if rebench_ms is None else rebench_ms)


@dataclass(frozen=True)
class TuneRow:
    """One config of a sweep and what happened to it."""

    index: int  # position in the space
    config: dict[str, Any]
    status: TuneStatus
    error: str | None = None
    latency_ms: float | None = None
    tflops: float | None = None
    gbps: float | None = None
    compile_s: float | None = None
    bench_s: float | None = None
    device: str = ""
    cached: bool = False  # restored from the history, not measured in this run
    latency_min_ms: float | None = None  # the spread over the repetitions (latency_ms is their mean on a GPU,
    latency_median_ms: float | None = None  # their median on the CPU)
    latency_p90_ms: float | None = None
    latency_std_ms: float | None = None
    repetitions: int | None = None
    rebench_ms: float | None = None  # the serial re-benchmark of the top configs at the end of the sweep
    registers: int | None = None  # machine-code columns (CUDA, when nvcc is found): the worst kernel's
    spills: int | None = None
    shared_bytes: int | None = None
    occupancy: float | None = None
    launchable: bool | None = None
    roofline_ms: float | None = None  # the static roofline bound (tilelab.estimate)
    cache: str | None = None  # who served its compile: TileLang's "memory" or "disk" cache, or "fresh" (tilelab.provenance)
    cache_entry: str | None = None  # TileLang's disk-cache entry for its key
    cache_key: str | None = None  # TileLang's cache key
    key_tir: str | None = None  # the key's components, each hashed (tilelab.provenance.KeyComponents.digests)
    key_target: str | None = None
    key_pass_configs: str | None = None
    key_compile_flags: str | None = None
    key_options: str | None = None
    key_tilelang: str | None = None
    key_source: str | None = None
    result: Any = field(default=None, repr=False, compare=False)  # the sweep it belongs to (set by TuneResult.add)
    trial: int | None = None  # the order in which configs were tried
    chosen_by: str | None = None  # "grid", "sampler", "warm start", "static prior", "random" or "history"
    elapsed_s: float | None = None  # seconds from the start of the run to this row
    timing: str | None = None  # how its calls were timed: "cuda events", "wall" or "timer <name>"
    noise_low_ms: float | None = None  # the 95 % interval of the median of its repetitions: its noise band
    noise_high_ms: float | None = None
    first_ms: float | None = None  # a config timed twice (it beat the best by more than the noise): its first timing

    @property
    def ok(self) -> bool:
        return self.status is TuneStatus.OK

    @property
    def roofline_pct(self) -> float | None:
        """``roofline_ms`` as a percent of the measured ``latency_ms`` (100 = at the bound)."""
        if self.roofline_ms is None or not self.latency_ms:
            return None
        return self.roofline_ms / self.latency_ms * 100

    def repro(self) -> str:
        """A standalone Python file that compiles (and checks) this config again; it imports only tilelang and torch.

        See :meth:`TuneResult.repro`.
        """
        if self.result is None:
            raise ValueError(f"{self.label()}: this row belongs to no sweep; use result.repro(config)")
        return self.result.repro(self)

    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.config.items())


def throughput(amount: float | None, latency_ms: float | None, scale: float) -> float | None:
    """``amount`` per second in units of ``scale`` (1e12 for TFLOP/s, 1e9 for GB/s)."""
    if amount is None or not latency_ms:
        return None
    return amount / (latency_ms * 1e-3) / scale
