"""Host overhead per call: a tuned kernel through TileLab, the same ``JITKernel`` directly, ``torch.matmul``.

The problem is a 64×64×64 fp16 GEMM (one block, one K step, a few µs of GPU
time), so the host side of each call dominates: a loop of ``CALLS`` calls,
one ``torch.cuda.synchronize()`` at the end, timed with ``time.perf_counter``;
the median of ``REPEATS`` such loops. "Through TileLab" is
``result.best_kernel(a, b)`` as a user writes it (property lookup included);
"direct" is the same config compiled by calling the ``@tilelang.jit``
function itself (TileLang's own ``JITKernel``, a kernel-cache hit).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import suite_kernels

__all__ = ["run_overhead"]

SIZE = 64
SPACE = [{"block_M": 64, "block_N": 64, "block_K": k, "num_stages": 2, "threads": 128} for k in (32, 64)]
CALLS, REPEATS, WARMUP = 10_000, 5, 500


def _per_call_us(call: Any, calls: int = CALLS, repeats: int = REPEATS) -> float:
    import torch

    for _ in range(WARMUP):
        call()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(calls):
            call()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - started) / calls * 1e6)
    return statistics.median(samples)


def run_overhead(db: Path, smoke: bool = False) -> dict:
    """The overhead row; ``status`` is ``skipped`` (with the reason in ``note``) without a GPU."""
    import torch

    import tilelab

    problem = f"{SIZE}×{SIZE}×{SIZE} fp16 GEMM"
    base = {"section": "overhead", "problem": problem}
    if not torch.cuda.is_available():
        reason = "no CUDA device here (lowering-only mode); call overhead needs a GPU"
        print(f"[overhead] skipped: {reason}", flush=True)
        return {**base, "status": "skipped", "note": reason}
    result = tilelab.tune(suite_kernels.matmul, SIZE, SIZE, SIZE, configs=SPACE, reference=torch.matmul, force=True, db=db, live=False)
    if result.best is None:
        return {**base, "status": "no_valid_config", "note": "; ".join(sorted({r.error or r.status.value for r in result.rows.values()}))}
    direct = suite_kernels.matmul(SIZE, SIZE, SIZE, **result.best_config)
    a = torch.empty(SIZE, SIZE, dtype=torch.float16, device="cuda").uniform_(-1, 1)
    b = torch.empty(SIZE, SIZE, dtype=torch.float16, device="cuda").uniform_(-1, 1)
    torch.testing.assert_close(direct(a, b), result.best_kernel(a, b))
    calls = 1_000 if smoke else CALLS
    row = {
        **base,
        "status": "ok",
        "best_config": result.best_config,
        "tilelab_us": _per_call_us(lambda: result.best_kernel(a, b), calls),
        "direct_us": _per_call_us(lambda: direct(a, b), calls),
        "torch_us": _per_call_us(lambda: torch.matmul(a, b), calls),
        "calls": calls,
        "repeats": REPEATS,
    }
    row["excess_us"] = row["tilelab_us"] - row["direct_us"]
    print(f"[overhead] TileLab {row['tilelab_us']:.2f} µs, direct JITKernel {row['direct_us']:.2f} µs, torch.matmul {row['torch_us']:.2f} µs per call", flush=True)
    return row
