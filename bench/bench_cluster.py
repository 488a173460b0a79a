"""Tuning on a Dask cluster: one GEMM space on one host's worth of workers, then on two (bench/results/cluster.json).

Space: the suite's fp16 GEMM (``suite_kernels.matmul``, 4096^3) over block_M,
block_N in {64, 128, 256}, block_K in {32, 64}, num_stages in {2, 3, 4},
threads in {128, 256} and swizzle in {0, 10}: 216 configs. Each run starts its
own ``tilelab.cluster.local(gpus=n, compile_threads=c)`` with an empty
``TILELANG_CACHE_DIR`` and an in-memory history, so every run starts cold; the
clock runs around the ``tilelab.tune`` call only.

A cluster grows by hosts, and a host brings its CPUs with its GPU. A GEMM
config compiles in about 4 s on one core and benchmarks in about 0.15 s, so a
sweep is bound by compiles unless there are some 27 CPUs per GPU. The runs:

- ``1 host``: 1 GPU benchmark worker and ``--cpus-per-host`` compile threads;
- ``2 hosts``: 2 GPU benchmark workers and twice the compile threads (the
  headline ``speedup_2gpu_vs_1gpu``: configs/s of 2 hosts over 1 host);
- ``1 GPU, all CPUs``: 1 GPU worker with the 2-host compile threads, which
  shows how much of the speedup the second GPU gives on its own
  (``speedup_2gpu_vs_1gpu_same_cpus``).

The report keeps each run's summed compile and benchmark seconds so that the
bottleneck can be checked.

    python bench/bench_cluster.py                      # a machine with two GPUs
    python bench/bench_cluster.py --smoke --out DIR    # CPU: a CPU kernel, the CPU benchmark worker

``--smoke`` runs the same flow on a machine without a GPU: a small CPU-kernel
space benchmarked on the cluster's CPU benchmark worker (one in every run: the
speedup means nothing there), to check the plumbing.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
M = N = K = 4096
GEMM_SPACE = {
    "block_M": [64, 128, 256],
    "block_N": [64, 128, 256],
    "block_K": [32, 64],
    "num_stages": [2, 3, 4],
    "threads": [128, 256],
    "swizzle": [0, 10],
}
SMOKE_SPACE = {"block": [32, 64]}
RUN_TIMEOUT_S = 240.0  # a config's compile limit


def _problem(smoke: bool) -> tuple:
    """(kernel, positional args, space, tune keywords) of the benchmark or of the smoke run."""
    sys.path.insert(0, str(HERE))
    if smoke:
        sys.path.insert(0, str(HERE.parent / "tests"))
        from tune_kernels import scale_add  # the tuning tests' CPU kernel

        return scale_add, (), SMOKE_SPACE, {"reference": lambda a, b: 2 * a + b, "bytes": 3 * 4096 * 4}
    from suite_kernels import matmul

    return matmul, (M, N, K), GEMM_SPACE, {"flops": 2 * M * N * K, "reference": lambda a, b: a @ b}


def _run(label: str, gpus: int, smoke: bool, compile_threads: int) -> dict:
    """One cold run on a fresh local cluster with ``gpus`` benchmark workers and ``compile_threads`` compiles at once;
    TileLang's cache is a new folder, removed after."""
    with tempfile.TemporaryDirectory(prefix=f"tilelang-cache-{gpus}gpu-") as cache:
        os.environ["TILELANG_CACHE_DIR"] = cache  # the workers inherit it
        return _cold_run(label, gpus, smoke, compile_threads)


def _cold_run(label: str, gpus: int, smoke: bool, compile_threads: int) -> dict:
    import tilelab
    import tilelab.cluster
    from tilelab.tune.dask_connect import workers_of

    kernel, args, space, options = _problem(smoke)
    client = tilelab.cluster.local(gpus=0 if smoke else gpus, compile_threads=compile_threads)
    try:
        workers = workers_of(client).values()
        resource = "CPU_BENCH" if smoke else "GPU"
        benchers = sum(1 for w in workers if w.get("resources", {}).get(resource))
        compile_threads = sum(w["nthreads"] for w in workers if not w.get("resources"))
        print(
            f"== {label}: {benchers} {resource} worker(s), {compile_threads} compile threads",
            file=sys.stderr,
            flush=True,
        )
        started = time.perf_counter()
        result = tilelab.tune(
            kernel, *args, **{name: tilelab.choices(values) for name, values in space.items()}, **options,
            target="c" if smoke else None, cluster=client, db=":memory:", force=True, timeout=RUN_TIMEOUT_S,
            on_row=lambda row: print(f"[{gpus} GPU {time.perf_counter() - started:6.1f}s] {row.status.value:13s}"
                                     f" {row.label()} {row.latency_ms or float('nan'):.4f} ms", file=sys.stderr),
        )  # fmt: skip
        wall = time.perf_counter() - started
    finally:
        client.shutdown()
    frame = result.to_pandas()
    best = result.best
    return {
        "run": label,
        "gpus": gpus,
        "benchmark_workers": benchers,
        "compile_threads": compile_threads,
        "device": result.device,
        "configs": result.total,
        "wall_s": wall,
        "configs_per_s": result.total / wall,
        "statuses": {k: int(v) for k, v in frame["status"].value_counts().items() if v},
        "compile_s_total": float(frame["compile_s"].sum()),
        "bench_s_total": float(frame["bench_s"].sum()),
        "best_config": best.config if best else None,
        "best_ms": best.latency_ms if best else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="CPU: a small CPU-kernel space (checks the plumbing)")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="directory for cluster.json")
    cpus = len(os.sched_getaffinity(0))
    parser.add_argument(
        "--cpus-per-host",
        type=int,
        default=max(1, cpus // 2),
        help="compile threads a host brings (default: half the CPUs)",
    )
    args = parser.parse_args()
    per_host = args.cpus_per_host
    one = _run("1 host", 1, args.smoke, per_host)
    two = _run("2 hosts", 2, args.smoke, 2 * per_host)
    one_all_cpus = _run("1 GPU, all CPUs", 1, args.smoke, 2 * per_host)
    ratio = two["best_ms"] / one["best_ms"] if one["best_ms"] and two["best_ms"] else None
    report = {
        "device": one["device"],
        "engine": "dask",
        "smoke": args.smoke,
        "cpus": cpus,
        "cpus_per_host": per_host,
        "configs": one["configs"],
        "space": SMOKE_SPACE if args.smoke else {"shape": [M, N, K], **GEMM_SPACE},
        "configs_per_s_1gpu": one["configs_per_s"],
        "configs_per_s_2gpu": two["configs_per_s"],
        "speedup_2gpu_vs_1gpu": two["configs_per_s"] / one["configs_per_s"],
        "speedup_2gpu_vs_1gpu_same_cpus": two["configs_per_s"] / one_all_cpus["configs_per_s"],
        "best_config_1gpu": one["best_config"],
        "best_config_2gpu": two["best_config"],
        "best_ms_ratio_2gpu_vs_1gpu": ratio,
        "goal_met": two["configs_per_s"] / one["configs_per_s"] >= 1.7 and ratio is not None and abs(ratio - 1) <= 0.02,
        "runs": [one, two, one_all_cpus],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cluster.json").write_text(json.dumps(report, indent=2, default=str))
    print(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
