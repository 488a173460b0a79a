"""Deterministic GEMM-like objectives for testing searches without timing noise.

A config's "latency" comes from a small model of a tiled GEMM on a GPU of 132
SMs: the work of one tile over its arithmetic intensity, pipeline stages that
hide memory latency up to a point, wave quantisation of the tiles over the SMs,
and a fixed pseudo-random roughness (a hash of the config, ±4 %) standing in
for everything a model misses. Tiles whose shared memory or accumulator
registers exceed the limits cannot launch. It is a model, not a GPU: it only
has to be rugged the way measured GEMM spaces are, and the same on every run.
"""

from __future__ import annotations

import hashlib
import itertools
import math

from tilelab.tune.result import TuneRow, TuneStatus
from tilelab.tune.search import Job

__all__ = ["GEMM_SPACE", "evaluate", "gemm_configs", "gemm_latency"]

GEMM_SPACE = {
    "block_M": [32, 64, 128, 256],
    "block_N": [32, 64, 128, 256],
    "block_K": [32, 64],
    "num_stages": [1, 2, 3, 4],
    "threads": [128, 256],
}
_SHARED_LIMIT = 227 * 1024
_SMS = 132


def gemm_configs(**space: list) -> list[dict]:
    """The product of ``space`` (default: :data:`GEMM_SPACE`, 256 configs)."""
    space = space or GEMM_SPACE
    return [dict(zip(space, values, strict=True)) for values in itertools.product(*space.values())]


def _roughness(config: dict) -> float:
    digest = hashlib.sha256(repr(sorted(config.items())).encode()).digest()
    return 1.0 + 0.08 * (digest[0] / 255.0 - 0.5)


def gemm_latency(config: dict, size: int = 4096, shared_limit: int = _SHARED_LIMIT) -> float | None:
    """Milliseconds for a ``size``³ fp16 GEMM with ``config``; None when the config cannot launch."""
    bm, bn = config.get("block_M", 128), config.get("block_N", 128)
    bk, stages, threads = config.get("block_K", 32), config.get("num_stages", 2), config.get("threads", 128)
    shared = (bm * bk + bk * bn) * 2 * max(stages, 1)
    if shared > shared_limit or bm * bn / threads > 128:  # over 128 fp32 accumulators a thread: over 255 registers
        return None
    intensity = bm * bn / (bm + bn)  # flops per byte loaded, up to a constant
    compute = 1.0 / min(1.0, intensity / 64.0)
    hidden = {1: 1.45, 2: 1.12, 3: 1.0, 4: 1.03}[stages] * (1.0 if bk == 64 else 1.06)
    warps = threads // 32
    balance = 1.0 if bm * bn / warps >= 2048 else 1.15  # too little work per warp
    tiles = math.ceil(size / bm) * math.ceil(size / bn)
    resident = max(1, min(4, _SHARED_LIMIT // shared, 64 // warps))
    waves = math.ceil(tiles / (_SMS * resident)) / (tiles / (_SMS * resident))
    return 0.25 * compute * hidden * balance * waves * _roughness(config)


def evaluate(job: Job, **limits: int) -> TuneRow:
    """The row a real sweep would give for ``job`` under :func:`gemm_latency`."""
    latency = gemm_latency(job.config, **limits)
    status = TuneStatus.OK if latency is not None else TuneStatus.CANNOT_LAUNCH
    return TuneRow(job.index, job.config, status, latency_ms=latency, trial=job.trial, chosen_by=job.chosen_by)
