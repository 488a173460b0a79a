"""TileLab's tuner against TileLang's ``@autotune`` on a FlashAttention forward space.

Space: block_M, block_N in {64, 128}, num_stages in {1, 2}, threads in {128, 256}
(16 configs) for the suite's attention kernel (``bench/suite_kernels.py``), batch 1,
32 heads, seq 4096, head_dim 128, not causal. Each tool runs in its own subprocess
with a cold cache (``bench_tune_gemm._child``); both bests are re-timed against
``F.scaled_dot_product_attention`` with the same ``do_bench``.

    python bench/bench_tune_attention.py [--out FILE]
"""

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import tilelang  # before torch and tvm
from bench_tune_gemm import _child
from suite_kernels import flash_attention

HERE = Path(__file__).resolve().parent
SHAPE = (1, 32, 4096, 128, False)  # batch, heads, seq, dim, causal
SPACE = {"block_M": [64, 128], "block_N": [64, 128], "num_stages": [1, 2], "threads": [128, 256]}


def configs() -> list[dict]:
    return [dict(zip(SPACE, values, strict=True)) for values in itertools.product(*SPACE.values())]


def _retime(kernel) -> dict:
    import torch
    import torch.nn.functional as F
    from tilelang.profiler import do_bench

    batch, heads, seq, dim, causal = SHAPE
    q, k, v = (torch.randn(batch, seq, heads, dim, device="cuda", dtype=torch.float16) for _ in range(3))
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
    expected = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal).transpose(1, 2)
    torch.testing.assert_close(kernel(q, k, v), expected, rtol=1e-2, atol=1e-2)
    best = do_bench(lambda: kernel(q, k, v), warmup=50, rep=300)
    sdpa_ms = do_bench(lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal), warmup=50, rep=300)
    return {"best_ms": best, "sdpa_ms": sdpa_ms, "vs_sdpa": sdpa_ms / best}


def run_tilelab() -> dict:
    import tilelab
    from tilelab.tune.build import build

    space = {name: tilelab.choices(values) for name, values in SPACE.items()}
    started = time.perf_counter()
    result = tilelab.tune(flash_attention, *SHAPE, **space, workers=os.cpu_count(), db=Path(tempfile.mkdtemp()) / "history.db",
                          on_row=lambda row: print(f"[tilelab {time.perf_counter() - started:6.1f}s] {row.status.value} {row.label()}", file=sys.stderr))  # fmt: skip
    wall = time.perf_counter() - started
    best = build(flash_attention, SHAPE, result.best_config, result.choice)
    statuses = result.to_pandas()["status"].value_counts().to_dict()
    return {"wall_s": wall, "best_config": result.best_config, "statuses": statuses, **_retime(best)}


def run_tilelang() -> dict:
    tuned = tilelang.autotune(configs=configs(), warmup=25, rep=100)(flash_attention)
    started = time.perf_counter()
    kernel = tuned(*SHAPE)
    wall = time.perf_counter() - started
    _, best_config = next(iter(tuned._tuner_cache.values()))
    return {"wall_s": wall, "best_config": best_config, **_retime(kernel)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", choices=["tilelab", "tilelang"], help="run one tool here and print its JSON")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "tune_attention.json")
    args = parser.parse_args()
    if args.tool:
        print(json.dumps((run_tilelab if args.tool == "tilelab" else run_tilelang)(), default=str))
        return
    import torch

    runs = {tool: _child(tool, __file__) for tool in ("tilelab", "tilelang")}
    mine, theirs = runs["tilelab"], runs["tilelang"]
    report = {"device": torch.cuda.get_device_name(), "cpus": os.cpu_count(), "shape": SHAPE, "configs": len(configs()), **runs}
    if "error" not in mine and "error" not in theirs:
        report["wall_ratio"] = mine["wall_s"] / theirs["wall_s"]
        report["best_ratio"] = mine["best_ms"] / theirs["best_ms"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=str))
    print(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
