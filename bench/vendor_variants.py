"""Named variants of the suite's kernels, checked against torch and timed beside it in one GPU call.

    python bench/vendor_variants.py [--out DIR]     # on a GPU: ~2 minutes; prints a table, writes variants.json

Each variant is ``suite_kernels.matmul`` / ``suite_kernels.flash_attention``
with a few knobs set: the steps of ``bench/notes_vendor_speed.md``. Every
variant is checked on fresh random inputs (NaN fails; GEMM ``allclose`` with the
suite's tolerance, attention ``allclose(1e-2)``) before it is timed with the
suite's ``do_bench`` settings; the torch reference is timed twice, so the
spread between its two timings says what difference is noise. It also says
which SDPA backend torch picks (each backend timed alone).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import tilelang  # noqa: F401  (before torch and tvm: it bundles its own TVM)

HERE = Path(__file__).resolve().parent
sys.path[:0] = [p for p in (str(HERE), str(HERE.parent)) if p not in sys.path]

import suite_kernels  # noqa: E402
from suite_tuned import BENCH  # noqa: E402

PLAIN = {"policy": "Square", "epilogue": "registers"}
GEMM_VARIANTS = {
    "plain 128x256 s3": PLAIN,
    "+ TMA epilogue": {"policy": "Square"},
    "+ FullRow (m64n256)": {},
    "+ FullRow s4": {"num_stages": 4},
    "256x128 FullRow s4": {"block_M": 256, "block_N": 128, "num_stages": 4},
    "+ persistent": {"persistent": True},
    "256x128 persistent": {"block_M": 256, "block_N": 128, "persistent": True},
}
GEMM_SHAPES = [(4096, 1024, 8192), (8192, 28672, 8192)]
ATTENTION_VARIANTS = {
    "128x128 s1 every-tile mask": {"num_stages": 1, "causal_mask": "every"},
    "128x128 s1": {"num_stages": 1},
    "128x128 s2": {},
    "128x64 s2": {"block_N": 64},
    "128x64 s3": {"block_N": 64, "num_stages": 3},
    "64x128 t128 s2": {"block_M": 64, "threads": 128},
}
ATTENTION_SEQS = [(512, False), (512, True), (1024, False), (1024, True)]


def _uniform(*shape):
    import torch

    return torch.empty(shape, dtype=torch.float16, device="cuda").uniform_(-1.0, 1.0)


def _bench(fn) -> float:
    from tilelang.profiler import do_bench

    return float(do_bench(fn, **BENCH))


def _gemm_case(shape, name, config):
    import torch

    M, N, K = shape
    kernel = suite_kernels.matmul(M, N, K, **config)
    a, b = _uniform(M, K), _uniform(K, N)
    out, ref = kernel(a, b), torch.matmul(a, b)
    ok = bool(torch.isfinite(out).all()) and torch.allclose(out, ref, rtol=1e-2, atol=2e-3 * math.sqrt(K))
    return {"section": "gemm", "problem": f"{M}×{N}×{K}", "variant": name, "config": config, "correct": ok,
            "kernel_ms": _bench(lambda: kernel(a, b)) if ok else None, "flops": 2.0 * M * N * K}  # fmt: skip


def _attention_case(seq, causal, name, config):
    import torch
    import torch.nn.functional as F

    kernel = suite_kernels.flash_attention(1, 32, seq, 128, causal, **config)
    q, k, v = (_uniform(1, seq, 32, 128) for _ in range(3))
    out = kernel(q, k, v)
    ref = F.scaled_dot_product_attention(*(x.transpose(1, 2) for x in (q, k, v)), is_causal=causal).transpose(1, 2)
    ok = bool(torch.isfinite(out).all()) and torch.allclose(out, ref, rtol=1e-2, atol=1e-2)
    return {"section": "attention", "problem": f"seq {seq}{' causal' if causal else ''}", "variant": name, "config": config,
            "correct": ok, "kernel_ms": _bench(lambda: kernel(q, k, v)) if ok else None,
            "flops": 4.0 * 32 * seq * seq * 128 * (0.5 if causal else 1.0)}  # fmt: skip


def _references() -> dict[str, tuple[float, float]]:
    """Each problem's torch time, measured twice (the spread is the noise floor)."""
    import torch
    import torch.nn.functional as F

    def twice(call):
        return _bench(call), _bench(call)

    found = {}
    for M, N, K in GEMM_SHAPES:
        a, b = _uniform(M, K), _uniform(K, N)
        found[f"{M}×{N}×{K}"] = twice(partial(torch.matmul, a, b))
    for seq, causal in [*ATTENTION_SEQS, (4096, False), (4096, True)]:
        q, k, v = (_uniform(1, seq, 32, 128).transpose(1, 2) for _ in range(3))  # the suite's layout
        found[f"seq {seq}{' causal' if causal else ''}"] = twice(
            partial(F.scaled_dot_product_attention, q, k, v, is_causal=causal)
        )
    return found


def _sdpa_backends(seq: int = 4096) -> dict[str, float | str]:
    """SDPA at ``seq`` with each backend forced, and the default: which one torch picks."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = (_uniform(1, seq, 32, 128).transpose(1, 2) for _ in range(3))
    found: dict[str, float | str] = {"default": _bench(lambda: F.scaled_dot_product_attention(q, k, v))}
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION):
        try:
            with sdpa_kernel([backend]):
                found[backend.name] = _bench(lambda: F.scaled_dot_product_attention(q, k, v))
        except RuntimeError as exc:  # a backend this build or GPU lacks is a row, not a stop
            found[backend.name] = f"unavailable: {str(exc).splitlines()[0][:120]}"
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path())
    args = parser.parse_args(argv)
    started = time.perf_counter()
    cases = [(_gemm_case, (shape, name, config)) for shape in GEMM_SHAPES for name, config in GEMM_VARIANTS.items()]
    cases += [
        (_attention_case, (seq, causal, name, config))
        for seq, causal in ATTENTION_SEQS
        for name, config in ATTENTION_VARIANTS.items()
    ]
    # compile in threads (TileLang's compiles overlap), time one at a time afterwards
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda item: _precompile(*item), cases))
    print(f"compiled {len(cases)} variants in {time.perf_counter() - started:.0f} s", flush=True)
    rows = []
    for fn, case in cases:
        try:
            rows.append(fn(*case))
        except Exception as exc:  # a variant that fails to build or run is a row
            rows.append(
                {"variant": case[-2], "problem": str(case[:-2]), "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            )
    references = _references()
    backends = _sdpa_backends()
    for row in rows:
        if "error" in row:
            continue
        ref = references[row["problem"]]
        row["reference_ms"], row["reference_ms_again"] = ref
        if row["kernel_ms"]:
            row["speedup"] = ref[0] / row["kernel_ms"]
            row["tflops"] = row["flops"] / row["kernel_ms"] / 1e9
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "variants.json").write_text(
        json.dumps({"rows": rows, "references": references, "sdpa_backends": backends}, indent=1, default=str)
    )
    print("SDPA seq 4096 by backend (ms):", json.dumps(backends), flush=True)
    print(
        "references (ms, twice):", json.dumps({k: [round(x, 4) for x in v] for k, v in references.items()}), flush=True
    )
    for row in rows:
        if "error" in row:
            print(f"{row['problem']:>18} | {row['variant']:<28} | ERROR {row['error']}")
        else:
            speed = f"{row['speedup']:.3f}x {row['tflops']:.0f} TF/s" if row.get("speedup") else "WRONG"
            print(
                f"{row['problem']:>18} | {row['variant']:<28} | {row['kernel_ms'] or 0:.4f} ms vs {row['reference_ms']:.4f} | {speed}"
            )
    print(f"done in {time.perf_counter() - started:.0f} s", flush=True)
    return 0


def _precompile(fn, case) -> None:
    try:
        if fn is _gemm_case:
            (M, N, K), _, config = case
            suite_kernels.matmul(M, N, K, **config)
        else:
            seq, causal, _, config = case
            suite_kernels.flash_attention(1, 32, seq, 128, causal, **config)
    except Exception:  # the timed pass compiles it again and records the error as a row
        pass


if __name__ == "__main__":
    sys.exit(main())
