"""A Dask cluster on one multi-GPU machine, ready for ``tilelab.tune(..., cluster=...)``.

>>> client = tilelab.cluster.local(gpus=2)          # doctest: +SKIP
>>> result = tilelab.tune(kernel, ..., cluster=client)  # doctest: +SKIP
>>> client.shutdown()                                # doctest: +SKIP

For several machines, start Dask's own scheduler and workers instead (by
hand, ``dask-jobqueue`` on Slurm, the Dask Helm chart on Kubernetes, or
``dask ssh``): one worker per GPU with ``--nthreads 1 --resources GPU=1`` and
``CUDA_VISIBLE_DEVICES`` naming that GPU, plus CPU workers for compiles, and
pass the scheduler's address as ``cluster="tcp://host:8786"``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from typing import Any

from tilelab._extras import require

__all__ = ["local"]

_START_S = 120.0


def _visible_gpus() -> list[str]:
    """The GPUs this process may use, as ``CUDA_VISIBLE_DEVICES`` entries."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [entry.strip() for entry in listed.split(",") if entry.strip() and not entry.strip().startswith("-")]
    import torch

    return [str(i) for i in range(torch.cuda.device_count())]


def local(gpus: int | None = None, compile_threads: int | None = None) -> Any:
    """Start a local Dask cluster for tuning and return a ``distributed.Client`` connected to it.

    It has one benchmark worker per GPU (one thread, ``resources={"GPU": 1}``,
    ``CUDA_VISIBLE_DEVICES`` set to that GPU alone), one worker for benchmarks of
    CPU-target kernels (``CPU_BENCH``), and one compile worker whose threads each
    drive a compile process. ``client.shutdown()`` stops it all.

    Parameters
    ----------
    gpus
        How many of the visible GPUs get a benchmark worker (default: all).
    compile_threads
        Compiles at once (default: one per available CPU).

    Raises
    ------
    ValueError
        When ``gpus`` is more than the GPUs this process can see.
    tilelab._extras.MissingExtraError
        When ``dask``/``distributed`` are not installed (``pip install 'tilelab[cluster]'``).
    """
    distributed = require("distributed", "tilelab.cluster.local()")
    visible = _visible_gpus() if gpus != 0 else []
    gpus = len(visible) if gpus is None else gpus
    if isinstance(gpus, bool) or not isinstance(gpus, int) or not 0 <= gpus <= len(visible):
        raise ValueError(f"gpus={gpus!r}: this machine shows {len(visible)} GPU(s) to this process")
    threads = compile_threads or len(os.sched_getaffinity(0))
    return _start(distributed, visible[:gpus], threads)


class _StartingWorkers:
    """This process's environment while Dask's nannies start workers in it.

    A nanny runs in this process and, before each worker it starts or restarts, writes the worker's variables
    into ``os.environ`` (``OMP_NUM_THREADS=1``, ``PYTHONHASHSEED`` …: its ``pre_spawn_env``; and distributed's
    ``__DASK_PARENT_PID``). Left there, they would reach every later local compile worker, and the changed compile
    environment would cost the next local sweep a fresh zygote and cold workers. Nannies start their workers
    together, so one nanny alone cannot tell what was there before: once no worker is starting any more, those
    variables go back to what they were before the first of them began."""

    written = ("__DASK_PARENT_PID",)  # distributed.proctitle marks the processes it starts with it

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._starting = 0
        self._before: dict[str, str] = {}
        self._names: set[str] = set()

    def begin(self, names: Iterable[str]) -> None:
        with self._lock:
            if self._starting == 0:
                self._before, self._names = dict(os.environ), set(self.written)
            self._starting += 1
            self._names.update(names)

    def end(self) -> None:
        with self._lock:
            self._starting -= 1
            if self._starting:
                return
            for name in self._names:
                if name in self._before:
                    os.environ[name] = self._before[name]
                else:
                    os.environ.pop(name, None)


_STARTING = _StartingWorkers()


def _nanny_class(distributed: Any) -> type:
    """``distributed.Nanny``, but the workers it starts or restarts leave this process's environment as it was."""

    class Nanny(distributed.Nanny):
        async def instantiate(self) -> Any:
            _STARTING.begin(self.pre_spawn_env)
            try:
                return await super().instantiate()
            finally:
                _STARTING.end()

    return Nanny


def _start(distributed: Any, devices: list[str], threads: int) -> Any:
    nanny = _nanny_class(distributed)
    common = {"host": "127.0.0.1", "dashboard": False, "memory_limit": 0, "silence_logs": 40, "death_timeout": _START_S}
    specs = {
        f"gpu-{device}": {
            "cls": nanny,
            "options": {**common, "nthreads": 1, "resources": {"GPU": 1}, "env": {"CUDA_VISIBLE_DEVICES": device}},
        }
        for device in devices
    }
    specs["cpu-bench"] = {"cls": nanny, "options": {**common, "nthreads": 1, "resources": {"CPU_BENCH": 1}}}
    specs["compile"] = {"cls": nanny, "options": {**common, "nthreads": threads}}
    scheduler = {"cls": distributed.Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"}}
    # SpecCluster returns once every worker has started (LocalCluster.scale would return before)
    cluster = distributed.SpecCluster(workers=specs, scheduler=scheduler, name="tilelab", silence_logs=40)
    client = distributed.Client(cluster, set_as_default=False)
    try:
        client.wait_for_workers(len(specs), timeout=_START_S)
    except BaseException:  # workers that never came (or an interrupt): no scheduler or worker process stays behind
        client.close()
        cluster.close()
        raise
    return client
