"""What a sweep runs on Dask workers: compiles, benchmarks, and a probe of the worker's device.

A compile runs as on one machine: in a compile process (``python -m
tilelab.tune.worker``, the local runner's worker) that the Dask worker keeps
between tasks, so a config that hangs is killed at its ``timeout`` and one
that crashes the compiler takes only that process down; the Dask worker's
thread merely waits. Several compiles at once (a worker with several threads)
each get their own process, and TileLang's compiler output, captured at the
file-descriptor level, never mixes.

A benchmark runs in the Dask worker itself, one at a time per GPU: bench
tasks ask for one unit of the worker's ``GPU`` resource (``CPU_BENCH`` for
CPU-target kernels). Its compile is a kernel-cache hit when the compile ran
on the same host (or when hosts share ``TILELANG_CACHE_DIR``); elsewhere the
benchmark compiles the config again. Each benchmark worker keeps a
:class:`~tilelab.tune.slot.BenchSlot` per sweep, as the notebook's process does
locally: the fastest configs stay prepared, so a confirmation
(``bench_task(..., again=True)``) and the interleaved re-benchmark
(:func:`rebench_task`) time them again without building or checking them again.

This module is imported on the workers; it is given everything by the client
through :class:`SweepJob` and keeps, per worker process, only the compile
processes and rebuilt kernels of the sweeps it serves.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field, replace
from multiprocessing.connection import wait
from typing import Any

from tilelab.targets import device_label, resolve_target
from tilelab.tune.build import TensorShape
from tilelab.tune.engine import TuneSetupError
from tilelab.tune.noise import Rebenched
from tilelab.tune.pool import Worker
from tilelab.tune.slot import BenchInputs, BenchSlot
from tilelab.tune.worker import read_message, write_message

__all__ = [
    "BenchReply",
    "CompileReply",
    "RetimeReply",
    "SweepJob",
    "bench_task",
    "compile_processes",
    "compile_task",
    "probe_task",
    "rebench_task",
    "release",
]

_lock = threading.Lock()
_idle: dict[str, list[Any]] = {}  # compile processes waiting for the next config, by sweep
_busy: dict[str, set[Any]] = {}  # compile processes compiling now, by sweep (release() kills them too)
_benches: dict[str, dict[str, Any]] = {}  # kernels rebuilt for benchmarks and their bench slot, by sweep; the newest two kept


@dataclass(frozen=True)
class SweepJob:
    """What every task of one sweep needs; ``digest`` names the sweep on the workers."""

    digest: str
    setup: bytes  # what a compile process reads first: a 4-byte length, then the pickle the local runner sends
    bench: bytes  # cloudpickle of the kernel spec, arguments, target, reference check, timer and kept count
    sys_path: tuple[str, ...]
    timeout: float


@dataclass(frozen=True)
class CompileReply:
    status: str  # a TuneStatus value
    error: str | None
    seconds: float
    columns: dict = field(default_factory=dict)  # machine-code columns, as the compile process reports them
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class BenchReply:
    outcome: Any  # a tilelab.tune.bench.BenchOutcome (without its kernel)
    device: str
    where: str = ""  # the worker's address: a confirmation goes back to it


@dataclass(frozen=True)
class RetimeReply:
    found: Rebenched | None
    device: str


def _add_paths(paths: tuple[str, ...]) -> None:
    sys.path[:0] = [p for p in paths if p not in sys.path]


# -- compiles ----------------------------------------------------------------------------
def compile_task(job: SweepJob, index: int, config: dict) -> CompileReply:
    """Compile one config in a compile process of this worker; a hang past ``job.timeout`` kills that process."""
    process = _checkout(job)
    try:
        reply = _compile(process, job, index, config)
    finally:
        with _lock:
            _busy.get(job.digest, set()).discard(process)
            if process.proc.poll() is None:
                _idle.setdefault(job.digest, []).append(process)
    return reply


def _checkout(job: SweepJob) -> Any:
    with _lock:
        for digest in [d for d in _idle if d != job.digest]:  # a worker serves one sweep at a time: free the last
            for stale in _idle.pop(digest):
                stale.stop()
        idle = _idle.get(job.digest)
        process = idle.pop() if idle else None
        if process is None:
            process = Worker(job.setup)
        _busy.setdefault(job.digest, set()).add(process)
    if not process.ready:
        try:
            message = read_message(process.proc.stdout)
            while message[0] == "alive":  # TileLang imported; the setup's answer comes next
                message = read_message(process.proc.stdout)
        except EOFError:
            message = ("exited", f"exit code {process.proc.wait()}: {process.log_tail()}")
        if message[0] != "ready":
            with _lock:
                _busy[job.digest].discard(process)
            process.stop()
            raise TuneSetupError(f"compile workers could not rebuild the kernel on {_host()}: {message[1]}")
        process.ready = True
    return process


def _compile(process: Any, job: SweepJob, index: int, config: dict) -> CompileReply:
    started = time.monotonic()
    write_message(process.requests, ("compile", index, config))
    if not wait([process.proc.stdout], timeout=job.timeout):
        process.stop()
        error = f"compile did not finish within {job.timeout:g} s; the worker was killed"
        return CompileReply("timeout", error, time.monotonic() - started)
    try:
        _, _, status, error, seconds, columns, notes = read_message(process.proc.stdout)
    except EOFError:
        code, tail = process.proc.wait(), process.log_tail()
        process.stop()
        error = f"compile worker died (exit code {code}){': ' + tail.splitlines()[-1] if tail else ''}"
        return CompileReply("crashed", error, time.monotonic() - started)
    return CompileReply(status, error, seconds, columns, tuple(notes))


def release(digest: str) -> int:
    """Stop this worker's compile processes of one sweep (idle or compiling); how many were stopped."""
    with _lock:
        processes = [*_idle.pop(digest, []), *_busy.pop(digest, set())]
        setup = _benches.pop(digest, None)
    for process in processes:
        process.stop()
    if setup is not None:
        setup["slot"].release()
    return len(processes)


def compile_processes() -> int:
    """How many compile processes this worker keeps now (idle or compiling), over all sweeps."""
    with _lock:
        return sum(map(len, _idle.values())) + sum(map(len, _busy.values()))


# -- benchmarks ----------------------------------------------------------------------------
def bench_task(job: SweepJob, index: int, config: dict, best_so_far: float | None = None, again: bool = False) -> BenchReply:
    """Benchmark one compiled config on this worker's device (a kernel-cache hit after a compile on this host);
    ``again``: time it once more (its kernel kept from the first timing when this worker made it)."""
    setup = _bench_setup(job)
    slot = setup["slot"]
    outcome = slot.again(index, config) if again else slot.bench(index, config, best_so_far)
    return BenchReply(replace(outcome, kernel=None), setup["device"], _address())


def rebench_task(job: SweepJob, configs: dict[int, dict], calls: dict[int, int]) -> RetimeReply:
    """Time the top configs again on this worker's device, interleaved (:meth:`BenchSlot.retime`)."""
    setup = _bench_setup(job)
    return RetimeReply(setup["slot"].retime(configs, calls), setup["device"])


def _address() -> str:
    from distributed import get_worker

    try:
        return get_worker().address
    except ValueError:  # called outside a Dask worker
        return ""


def _bench_setup(job: SweepJob) -> dict[str, Any]:
    with _lock:
        setup = _benches.get(job.digest)
    if setup is not None:
        return setup
    _add_paths(job.sys_path)
    import cloudpickle
    import tilelang  # noqa: F401  (before tvm, and before the kernel is rebuilt)

    setup = cloudpickle.loads(job.bench)
    choice = setup["choice"]
    setup["kernel"] = setup["spec"].load()
    setup["args"] = tuple(_materialised(a, choice) for a in setup["args"])
    setup["fixed"] = {k: _materialised(v, choice) for k, v in setup["fixed"].items()}
    setup["device"] = device_name(choice)
    setup["slot"] = BenchSlot(BenchInputs(setup["kernel"], setup["args"], setup["fixed"], choice, setup["reference"],
                                          setup["rtol"], setup["atol"], setup.get("timer"), setup.get("keep", 3)))  # fmt: skip
    with _lock:
        for digest in list(_benches)[:-1]:
            del _benches[digest]
        _benches[job.digest] = setup
    return setup


def _materialised(value: Any, choice: Any) -> Any:
    """A tensor argument (shipped as shape and dtype) as a tensor on this worker's device, for eager kernels."""

    if not isinstance(value, TensorShape):
        return value
    import torch

    device = torch.device("cuda", torch.cuda.current_device()) if choice.is_cuda else torch.device("cpu")
    tensor = torch.empty(value.shape, dtype=value.meta().dtype, device=device)
    return tensor.uniform_(-1.0, 1.0) if tensor.is_floating_point() else tensor.zero_()


# -- the device ------------------------------------------------------------------------------
def device_name(choice: Any) -> str:
    """The device rows measured under ``choice`` are labelled with (the GPU's name, or the CPU's model)."""
    return device_label(choice)


def probe_task(arch: str | None, target: Any, runnable: bool) -> tuple[Any, str]:
    """The target this worker resolves for ``arch`` / ``target`` and its device name.

    ``runnable=False`` (a probe of a worker that benchmarks nothing) lowers CUDA kernels only.
    """

    choice = resolve_target(arch, target)
    if not runnable and choice.is_cuda and choice.runnable:
        choice = choice.lowered("this worker benchmarks nothing")
    return choice, device_name(choice)


def _host() -> str:
    import socket

    return socket.gethostname()
