"""TileLab's tuner against TileLang's ``@autotune`` on the same 36-config GEMM space.

Space: block_M, block_N in {64, 128, 256}, block_K in {32, 64}, threads in
{128, 256}, num_stages 3; fp16 4096^3 (fp32 accumulate). Each tool runs in its
own subprocess with its own empty ``TILELANG_CACHE_DIR`` (a cold, fair start)
and as many compile workers as CPUs. Each measures its wall time around the
tuning call only, then re-times its best kernel and ``torch.matmul`` with the
same ``do_bench`` so the two bests are compared on equal terms.

Goal: TileLab wall time <= 1/3 of TileLang's, best latency within 2%.

    python bench/bench_tune_gemm.py            # both tools, ~3 min on 16 cores + H100
    python bench/bench_tune_gemm.py --tool tilelab   # one tool, prints its JSON

Writes bench/results/tune_gemm.json.
"""


import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tilelang  # before torch and tvm; the cache directory comes from the environment
import tilelang.language as T

HERE = Path(__file__).resolve().parent
M = N = K = 4096
SPACE = {"block_M": [64, 128, 256], "block_N": [64, 128, 256], "block_K": [32, 64], "threads": [128, 256]}
TOOL_TIMEOUT_S = 210  # each tool; both together stay under 8 minutes


def matmul(M, N, K, block_M=128, block_N=128, block_K=32, threads=128, num_stages=3):
    dtype, accum_dtype = "float16", "float32"

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def configs() -> list[dict]:
    return [dict(zip(SPACE, values, strict=True), num_stages=3) for values in itertools.product(*SPACE.values())]


def _retime(kernel) -> dict:
    """The best kernel and torch.matmul, timed the same way (CUDA events, L2 flushed)."""
    import torch
    from tilelang.profiler import do_bench

    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(kernel(a, b), a @ b, rtol=1e-2, atol=1e-2)
    best = do_bench(lambda: kernel(a, b), warmup=50, rep=300)
    torch_ms = do_bench(lambda: a @ b, warmup=50, rep=300)
    return {"best_ms": best, "torch_ms": torch_ms, "vs_torch": torch_ms / best}


def run_tilelab() -> dict:
    import tilelab
    from tilelab.tune.build import build

    kernel = tilelang.jit(out_idx=[-1])(matmul)
    space = {name: tilelab.choices(values) for name, values in SPACE.items()}
    started = time.perf_counter()
    result = tilelab.tune(
        kernel, M, N, K, num_stages=3, **space,
        flops=2 * M * N * K, workers=os.cpu_count(), db=Path(tempfile.mkdtemp()) / "history.db",
        on_row=lambda row: print(f"[tilelab {time.perf_counter() - started:6.1f}s] {row.status.value:13s} {row.label()}"
                                 f" {row.latency_ms or float('nan'):.4f} ms compile {row.compile_s:.1f}s {row.error or ''}", file=sys.stderr),
    )  # fmt: skip
    wall = time.perf_counter() - started
    frame = result.to_pandas()
    hit = time.perf_counter()
    best = build(kernel, (M, N, K), {"num_stages": 3, **result.best_config}, result.choice)
    cache_hit_s = time.perf_counter() - hit
    return {
        "wall_s": wall,
        "best_config": result.best_config,
        "self_reported_best_ms": result.best.latency_ms,
        "statuses": frame["status"].value_counts().to_dict(),
        "compile_s_median": float(frame["compile_s"].median()),
        "bench_s_median": float(frame["bench_s"].median()),
        "parent_cache_hit_compile_s": cache_hit_s,
        **_retime(best),
    }


def run_tilelang() -> dict:
    os.environ.setdefault("TILELANG_AUTO_TUNING_CPU_COUNTS", str(os.cpu_count()))
    tuned = tilelang.autotune(configs=configs(), warmup=25, rep=100)(tilelang.jit(out_idx=[-1])(matmul))
    started = time.perf_counter()
    kernel = tuned(M, N, K)
    wall = time.perf_counter() - started
    _, best_config = next(iter(tuned._tuner_cache.values()))
    return {"wall_s": wall, "best_config": best_config, **_retime(kernel)}


def _child(tool: str, script: str = __file__) -> dict:
    """Run ``script --tool TOOL`` with a cold TileLang cache, removed after; its last stdout line is its JSON report."""
    with tempfile.TemporaryDirectory(prefix=f"tilelang-cache-{tool}-") as cache:
        return _child_in(tool, script, cache)


def _child_in(tool: str, script: str, cache: str) -> dict:
    env = dict(os.environ)
    env["TILELANG_CACHE_DIR"] = cache
    env["TILELANG_AUTO_TUNING_CPU_COUNTS"] = str(os.cpu_count())
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE.parent), env.get("PYTHONPATH")) if p)
    print(f"== {tool}: cold cache {env['TILELANG_CACHE_DIR']}, {os.cpu_count()} CPUs", file=sys.stderr, flush=True)
    started = time.perf_counter()
    try:  # progress goes to stderr (shown live); the JSON report is the last line of stdout
        proc = subprocess.run(
            [sys.executable, script, "--tool", tool], env=env, stdout=subprocess.PIPE, text=True, timeout=TOOL_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {TOOL_TIMEOUT_S} s"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": f"exit code {proc.returncode}", "stdout_tail": lines[-5:]}
    return {**json.loads(lines[-1]), "process_wall_s": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", choices=["tilelab", "tilelang"], help="run one tool here and print its JSON")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "tune_gemm.json")
    args = parser.parse_args()
    if args.tool:
        print(json.dumps((run_tilelab if args.tool == "tilelab" else run_tilelang)(), default=str))
        return
    import torch

    runs = {tool: _child(tool) for tool in ("tilelab", "tilelang")}
    mine, theirs = runs["tilelab"], runs["tilelang"]
    report = {"device": torch.cuda.get_device_name(), "cpus": os.cpu_count(), "shape": [M, N, K], "configs": len(configs()), **runs}
    finished = "error" not in mine and "error" not in theirs
    if finished:
        report["wall_ratio"] = mine["wall_s"] / theirs["wall_s"]
        report["best_ratio"] = mine["best_ms"] / theirs["best_ms"]
    report["goal_met"] = finished and report["wall_ratio"] <= 1 / 3 and report["best_ratio"] <= 1.02
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=str))
    print(json.dumps(report, indent=2, default=str))
    if not finished:
        raise SystemExit(f"a tool did not finish: tilelab {mine.get('error', 'ok')}, tilelang {theirs.get('error', 'ok')}")
    print(
        f"TileLab {mine['wall_s']:.1f}s vs TileLang @autotune {theirs['wall_s']:.1f}s (ratio {report['wall_ratio']:.2f}); "
        f"best {mine['best_ms']:.4f} vs {theirs['best_ms']:.4f} ms (ratio {report['best_ratio']:.3f}); "
        f"torch.matmul {mine['torch_ms']:.4f} ms; goal met: {report['goal_met']}"
    )


if __name__ == "__main__":
    main()
