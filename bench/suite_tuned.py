"""Tuned problems: each is one ``tilelab.tune`` search over a large space, then its winner checked and timed beside torch.

The spaces (``suite_spaces``: ~600-730 configs per GEMM shape, 100-150 per
attention problem) are searched the way a user would search them:
``tilelab.tune(..., search="optuna", budget=N, seed=0)``: the static prior picks
the first batch, the best configs of the shapes already tuned in this run come
next (the warm start: the section shares one history), TPE the rest, slow
configs are stopped after their first calls, and the top three are re-timed at
the end. ``N`` comes from the section's seconds (``suite_budget``).

Correctness, twice. ``check="every"`` (the default): the tuner compares every
config's output with torch (``reference=``, ``allclose``) before timing it,
so a wrong config can never win. ``check="winner"`` leaves that out of the
search (it copies both outputs to the host: seconds per config on the large
GEMMs) and relies on the second check alone. Either way the winner is checked
again on fresh inputs, on the device, before it is timed; a winner that fails
is reported and the next best is tried. GEMM tolerance: rtol 1e-2 and an atol
that scales with the outputs' spread (``2e-3 * sqrt(K)``; uniform [-1, 1]
inputs give outputs of standard deviation ``sqrt(K) / 3``), because cuBLAS may
reduce split-K partials in fp16; a wrong tile is off by O(sqrt(K)), far above
it. Attention: 1e-2 both. The winner and torch are then timed by the same
``do_bench`` call, inputs made before, views taken outside the timed region.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import suite_kernels
import suite_spaces
import torch
import torch.nn.functional as F
from tilelang.profiler import do_bench

import tilelab
from tilelab.tune.result import best_rank

__all__ = ["BENCH", "CHECKS", "Problem", "attention_problems", "gemm_problems", "run_problem"]

GEMM_SHAPES = [
    (4096, 1024, 8192), (4096, 8192, 8192), (4096, 28672, 8192), (4096, 8192, 28672),
    (8192, 1024, 8192), (8192, 8192, 8192), (8192, 28672, 8192), (8192, 8192, 28672),
]  # fmt: skip
ATTENTION_SEQS = [512, 1024, 4096]
SMOKE_GEMM = [(256, 512, 512)]
BENCH = {"warmup": 50, "rep": 300, "return_mode": "median"}
CHECKS = ("every", "winner")
CANDIDATES = 4  # ranked configs tried in turn when a winner fails its check on fresh inputs
SEED = 0


@dataclass
class Problem:
    """One tuned problem: the kernel's arguments, its space, its work and its torch twin."""

    section: str  # "gemm" or "attention"
    label: str
    args: tuple
    space: list[dict]
    flops: float
    outputs: int  # elements the kernel writes (what the tuner's check copies to the host)
    rtol: float = 1e-2
    atol: float = 1e-2
    shape: dict[str, Any] = field(default_factory=dict)

    @property
    def kernel(self) -> Any:
        return suite_kernels.matmul if self.section == "gemm" else suite_kernels.flash_attention

    def reference(self, *inputs: Any) -> Any:
        """torch's result for the kernel's inputs (the kernel's layout; a split-K workspace is ignored)."""
        if self.section == "gemm":
            return torch.matmul(inputs[0], inputs[1])
        q, k, v = (x.transpose(1, 2) for x in inputs)
        return F.scaled_dot_product_attention(q, k, v, is_causal=self.shape["causal"]).transpose(1, 2)

    def inputs(self, config: dict) -> tuple[list[Any], Any]:
        """Fresh inputs for ``config``'s kernel, and the torch call timed beside it (views made here, not in the loop)."""
        if self.section == "gemm":
            inputs = suite_kernels.gemm_inputs(*self.args, split_k=config.get("split_k", 1))
            a, b = inputs[:2]
            return inputs, lambda: torch.matmul(a, b)
        batch, heads, seq, dim, causal = self.args
        q, k, v = (torch.empty(batch, seq, heads, dim, dtype=torch.float16, device="cuda").uniform_(-1.0, 1.0) for _ in range(3))
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        return [q, k, v], lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)


def gemm_problems(smoke: bool = False) -> list[Problem]:
    problems = []
    for M, N, K in SMOKE_GEMM if smoke else GEMM_SHAPES:
        space = suite_spaces.smoke_gemm_space() if smoke else suite_spaces.gemm_space(M, N, K)
        shape = {"M": M, "N": N, "K": K}
        problems.append(Problem("gemm", f"{M}×{N}×{K}", (M, N, K), space, 2.0 * M * N * K, M * N, atol=2e-3 * math.sqrt(K), shape=shape))
    return problems


def attention_problems(smoke: bool = False) -> list[Problem]:
    batch, heads, dim = 1, 32, 128
    problems = []
    for seq in [128] if smoke else ATTENTION_SEQS:
        for causal in [False] if smoke else [False, True]:
            flops = 4.0 * batch * heads * seq * seq * dim * (0.5 if causal else 1.0)
            space = suite_spaces.smoke_attention_space() if smoke else suite_spaces.attention_space(seq, causal, dim)
            shape = {"batch": batch, "heads": heads, "seq": seq, "dim": dim, "causal": causal}
            label = f"seq {seq}{' causal' if causal else ''}"
            problems.append(Problem("attention", label, (batch, heads, seq, dim, causal), space, flops, batch * seq * heads * dim, shape=shape))
    return problems


def _log(problem: Problem, started: float, text: str) -> None:
    print(f"[{problem.section} {problem.label} {time.perf_counter() - started:5.1f}s] {text}", flush=True)


def _config_rows(result: Any) -> list[dict]:
    return [
        {"config": row.config, "status": row.status.value, "latency_ms": row.latency_ms, "rebench_ms": row.rebench_ms,
         "tflops": row.tflops, "compile_s": row.compile_s, "bench_s": row.bench_s, "registers": row.registers,
         "spills": row.spills, "shared_bytes": row.shared_bytes, "occupancy": row.occupancy, "trial": row.trial,
         "chosen_by": row.chosen_by, "elapsed_s": row.elapsed_s, "error": row.error}
        for row in result.ordered_rows()
    ]  # fmt: skip


def run_problem(problem: Problem, db: Path, arch: str | None, budget: int, check: str = "every", timeout: float = 90.0) -> dict:
    """Search ``problem``'s space with ``budget`` configs; on a GPU check and re-time the winner beside torch."""
    started = time.perf_counter()

    def progress(row):
        timing = f" {row.latency_ms:.4f} ms" if row.latency_ms else ""
        error = f" ({row.error[:100]})" if row.error else ""
        _log(problem, started, f"#{row.trial} {row.status.value:13s} {row.label()}{timing} [{row.chosen_by}]{error}")

    runnable = arch is None
    result = tilelab.tune(
        problem.kernel, *problem.args, configs=problem.space, reference=problem.reference if check == "every" else None,
        flops=problem.flops, arch=arch, timeout=timeout, force=True, db=db, rtol=problem.rtol, atol=problem.atol,
        search="optuna" if runnable else "grid", budget=budget, seed=SEED if runnable else None, on_row=progress, live=False,
    )  # fmt: skip
    statuses = Counter(row.status.value for row in result.rows.values())
    row = {
        "section": problem.section, "problem": problem.label, "shape": problem.shape, "flops": problem.flops,
        "space": len(problem.space), "budget": budget, "check": check,
        "search": result.search.describe() if result.search is not None else "grid",
        "configs_total": len(problem.space), "configs_tried": len(result.rows), "benchmarked": _benchmarked(statuses, result.runnable),
        "configs_ok": statuses.get("ok", 0), "statuses": dict(statuses), "tune_s": time.perf_counter() - started,
        "configs": _config_rows(result), "rtol": problem.rtol, "atol": problem.atol, "partial": result.partial,
    }  # fmt: skip
    cut = f"stopped after {result.done} of {budget} configs: the section's time ran out" if result.partial else ""
    if not result.runnable:
        return {**row, "status": "partial" if cut else "lowered", "note": cut or "no GPU: compile status only"}
    winner = _checked_winner(problem, result)
    if winner is None:
        return {**row, "status": "no_valid_config", "note": cut or "no config compiled, ran and matched the reference"}
    row.update(winner)
    _log(problem, started, f"best {row['tilelab_ms']:.4f} ms vs reference {row['reference_ms']:.4f} ms: {row['speedup']:.3f}×")
    return {**row, "status": "partial" if cut else "ok", "note": cut}


def _benchmarked(statuses: Counter, runnable: bool) -> int:
    """Configs whose calls were timed: ``ok``, and ``pruned`` (stopped after their first calls); none when lowering only."""
    return statuses.get("ok", 0) + statuses.get("pruned", 0) if runnable else 0


def _checked_winner(problem: Problem, result: Any) -> dict | None:
    """The fastest config that matches torch on fresh inputs, timed beside it; the configs that failed are named."""
    ranked = sorted((r for r in result.rows.values() if r.ok), key=lambda r: best_rank(r.latency_ms, r.rebench_ms))
    failed = []
    for row in ranked[:CANDIDATES]:
        kernel = problem.kernel(*problem.args, **row.config)
        inputs, reference = problem.inputs(row.config)
        checked = _check(kernel(*inputs), problem.reference(*inputs), problem)  # the timed twin may use torch's own layout
        if not checked["passed"]:
            failed.append({"config": row.config, **checked})
            continue
        timed = _retime(problem, kernel, inputs, reference)
        resources = {key: getattr(row, key) for key in ("registers", "spills", "shared_bytes", "occupancy")}
        return {**timed, "best_config": row.config, "best_trial": row.trial, "best_chosen_by": row.chosen_by,
                "best_resources": resources, "checked": checked, "failed_winners": failed}  # fmt: skip
    return None


def _check(out: Any, expected: Any, problem: Problem) -> dict:
    """``allclose`` on the device with the problem's tolerances; NaN or inf fails."""
    out, expected = out.float(), expected.float()
    finite = bool(torch.isfinite(out).all())
    passed = finite and bool(torch.allclose(out, expected, rtol=problem.rtol, atol=problem.atol))
    worst = float((out - expected).abs().max()) if finite else math.inf
    against = "torch.matmul" if problem.section == "gemm" else "F.scaled_dot_product_attention"
    return {"against": against, "passed": passed, "max_abs_diff": worst, "rtol": problem.rtol, "atol": problem.atol}


def _retime(problem: Problem, kernel: Any, inputs: list[Any], reference: Any) -> dict:
    """The winner and its torch twin, timed by the same ``do_bench`` call on the same fresh inputs."""
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
