"""Tuned problems: each is one ``tilelab.tune`` sweep, then its best kernel against torch.

GEMM space (6 configs, the same for every shape; ``bench/notes_vendor_speed.md``
has the measurements behind it). Hopper's wgmma wants a warpgroup per 64 rows
and large tiles to amortise the TMA loads: 128x256 and 256x128 tiles with two
consumer warpgroups (256 threads: the fp32 accumulator is 128 registers a
thread), the ``FullRow`` warp policy (one ``m64n256k16`` wgmma a k-slice for
128x256 tiles, two ``m64n128k16`` for 256x128, as cuBLAS's ``256x128`` Hopper
kernel), the tile stored through shared memory with TMA, block_K 64 (128 bytes
of fp16: one swizzled TMA row) at 3 and 4 stages (48 KiB a stage: 144 / 192 KiB
of the 227 KiB; the epilogue reuses those buffers), and 128x256 with block_K 128
at 2 stages (half the barrier round trips). Persistent blocks were 3-6 % slower
on three shapes (the notes), so they are not in the space. The previous best
config (128x256, ``Square`` policy, register epilogue) stays as the control,
measured in the same run. Rasterisation (``swizzle=10``) is on: N up to 28672
makes L2 reuse of B the difference.

Attention space (6 configs): block_M 128 with block_N 128 at 1 / 2 stages and
block_N 64 at 2 / 3 stages on 256 threads (the measured best family: 128-row
tiles, two consumer warpgroups), and block_M 64 on one warpgroup (128 threads)
for the short sequences, where 128-row tiles leave SMs idle (seq 512: 4 x 32 =
128 blocks for 132 SMs). The block_N 64 causal configs used to give NaN rows;
the kernel now keeps them finite, and launches causal q-tiles heaviest first.

Correctness is ``reference=``: every config's output is compared with torch
(``allclose``) before it is timed. GEMM tolerance: rtol 1e-2 and an atol that
scales with the outputs' spread (``2e-3 * sqrt(K)``; uniform [-1, 1] inputs
give outputs of standard deviation ``sqrt(K) / 3``), because cuBLAS may reduce
split-K partials in fp16; a wrong tile is off by O(sqrt(K)), far above it.
The best config is then re-timed beside the reference with the same
``do_bench`` call, inputs made before and views taken outside the timed region.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import suite_kernels

__all__ = ["Problem", "attention_problems", "gemm_problems", "run_problem"]

GEMM_SHAPES = [
    (4096, 1024, 8192), (4096, 8192, 8192), (4096, 28672, 8192), (4096, 8192, 28672),
    (8192, 1024, 8192), (8192, 8192, 8192), (8192, 28672, 8192), (8192, 8192, 28672),
]  # fmt: skip
GEMM_CONTROL = {"block_M": 128, "block_N": 256, "block_K": 64, "num_stages": 3, "threads": 256,
                "policy": "Square", "epilogue": "registers", "persistent": False}  # fmt: skip
GEMM_SPACE = [
    *({**GEMM_CONTROL, "block_M": m, "block_N": n, "block_K": k, "num_stages": s, "policy": "FullRow", "epilogue": "shared"}
      for (m, n, k, s) in [(128, 256, 64, 3), (128, 256, 64, 4), (256, 128, 64, 3), (256, 128, 64, 4), (128, 256, 128, 2)]),
    GEMM_CONTROL,
]  # fmt: skip
ATTENTION_SEQS = [512, 1024, 4096]
ATTENTION_SPACE = [
    *({"block_M": 128, "block_N": n, "num_stages": s, "threads": 256} for n, s in [(128, 1), (128, 2), (64, 2), (64, 3)]),
    *({"block_M": 64, "block_N": n, "num_stages": 2, "threads": 128} for n in (64, 128)),
]
SMOKE_GEMM = [(256, 256, 256), (256, 512, 128)]
SMOKE_SPACE = [GEMM_SPACE[0], GEMM_SPACE[2]]
BENCH = {"warmup": 50, "rep": 300, "return_mode": "median"}


@dataclass
class Problem:
    """One tuned problem: the kernel's arguments, its space, its work and its torch twin."""

    section: str  # "gemm" or "attention"
    label: str
    args: tuple
    space: list[dict]
    flops: float
    rtol: float = 1e-2
    atol: float = 1e-2
    shape: dict[str, Any] = field(default_factory=dict)

    @property
    def kernel(self) -> Any:
        return suite_kernels.matmul if self.section == "gemm" else suite_kernels.flash_attention

    def reference(self, *inputs: Any) -> Any:
        """torch's result for the kernel's inputs (the kernel's layout)."""
        import torch
        import torch.nn.functional as F

        if self.section == "gemm":
            return torch.matmul(*inputs)
        q, k, v = (x.transpose(1, 2) for x in inputs)
        return F.scaled_dot_product_attention(q, k, v, is_causal=self.shape["causal"]).transpose(1, 2)

    def inputs(self) -> tuple[list[Any], Any]:
        """Fresh inputs for the kernel, and the torch call timed beside it (views made here, not in the loop)."""
        import torch
        import torch.nn.functional as F

        def uniform(*shape):
            return torch.empty(shape, dtype=torch.float16, device="cuda").uniform_(-1.0, 1.0)

        if self.section == "gemm":
            M, N, K = self.args
            a, b = uniform(M, K), uniform(K, N)
            return [a, b], lambda: torch.matmul(a, b)
        batch, heads, seq, dim, causal = self.args
        q, k, v = (uniform(batch, seq, heads, dim) for _ in range(3))
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        return [q, k, v], lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)


def gemm_problems(smoke: bool = False) -> list[Problem]:
    shapes, space = (SMOKE_GEMM, SMOKE_SPACE) if smoke else (GEMM_SHAPES, GEMM_SPACE)
    return [
        Problem("gemm", f"{M}×{N}×{K}", (M, N, K), space, 2.0 * M * N * K, atol=2e-3 * math.sqrt(K), shape={"M": M, "N": N, "K": K})
        for M, N, K in shapes
    ]


def attention_problems(smoke: bool = False) -> list[Problem]:
    seqs, space = ([128], ATTENTION_SPACE[4:5]) if smoke else (ATTENTION_SEQS, ATTENTION_SPACE)
    batch, heads, dim = 1, 32, 128
    problems = []
    for seq in seqs:
        for causal in (False, True):
            flops = 4.0 * batch * heads * seq * seq * dim * (0.5 if causal else 1.0)
            label = f"seq {seq}{' causal' if causal else ''}"
            shape = {"batch": batch, "heads": heads, "seq": seq, "dim": dim, "causal": causal}
            problems.append(Problem("attention", label, (batch, heads, seq, dim, causal), space, flops, shape=shape))
    return problems


def _log(problem: Problem, started: float, text: str) -> None:
    print(f"[{problem.section} {problem.label} {time.perf_counter() - started:5.1f}s] {text}", flush=True)


def _config_rows(result: Any) -> list[dict]:
    return [
        {"config": row.config, "status": row.status.value, "latency_ms": row.latency_ms, "tflops": row.tflops,
         "compile_s": row.compile_s, "error": row.error}
        for row in result.ordered_rows()
    ]  # fmt: skip


def run_problem(problem: Problem, db: Path, arch: str | None, timeout: float = 90.0) -> dict:
    """Tune ``problem``; on a GPU re-time the best config beside torch. Returns the problem's row."""
    import tilelab

    started = time.perf_counter()

    def progress(row):
        timing = f" {row.latency_ms:.4f} ms" if row.latency_ms else ""
        error = f" ({row.error[:120]})" if row.error else ""
        _log(problem, started, f"{row.status.value:13s} {row.label()}{timing}, compile {row.compile_s or 0:.1f}s{error}")

    result = tilelab.tune(
        problem.kernel, *problem.args, configs=problem.space, reference=problem.reference, flops=problem.flops,
        arch=arch, timeout=timeout, force=True, db=db, rtol=problem.rtol, atol=problem.atol, on_row=progress, live=False,
    )  # fmt: skip
    statuses = Counter(row.status.value for row in result.rows.values())
    row = {
        "section": problem.section, "problem": problem.label, "shape": problem.shape, "flops": problem.flops,
        "configs_total": len(problem.space), "configs_ok": statuses.get("ok", 0), "statuses": dict(statuses),
        "best_config": result.best_config, "tune_s": time.perf_counter() - started, "configs": _config_rows(result),
        "rtol": problem.rtol, "atol": problem.atol, "partial": result.partial,
    }  # fmt: skip
    cut = f"budget ran out after {result.done}/{result.total} configs" if result.partial else ""
    if not result.runnable:
        return {**row, "status": "partial" if cut else "lowered", "note": cut or "no GPU: compile status only"}
    if result.best is None:
        return {**row, "status": "no_valid_config", "note": cut or "no config compiled and matched the reference"}
    row.update(_retime(problem, result.best_kernel))
    _log(problem, started, f"best {row['tilelab_ms']:.4f} ms vs reference {row['reference_ms']:.4f} ms: {row['speedup']:.3f}×")
    return {**row, "status": "partial" if cut else "ok", "note": cut}


def _retime(problem: Problem, kernel: Any) -> dict:
    """The best kernel and its torch twin, timed by the same ``do_bench`` call on fresh inputs."""
    from tilelang.profiler import do_bench

    inputs, reference = problem.inputs()
    tilelab_ms = float(do_bench(lambda: kernel(*inputs), **BENCH))
    reference_ms = float(do_bench(reference, **BENCH))
    return {
        "tilelab_ms": tilelab_ms,
        "reference_ms": reference_ms,
        "tilelab_tflops": problem.flops / (tilelab_ms * 1e-3) / 1e12,
        "reference_tflops": problem.flops / (reference_ms * 1e-3) / 1e12,
        "speedup": reference_ms / tilelab_ms,
        "timing": f"tilelang.profiler.do_bench({', '.join(f'{k}={v!r}' for k, v in BENCH.items())})",
    }

