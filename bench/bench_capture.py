"""Capture overhead: ``tilelab.explore`` against a plain ``tilelang.lower`` of the same GEMM.

    python bench/bench_capture.py [--arch sm_90] [--repeat 5]

Prints the median of each and their ratio (goal: explore <= 1.3x lower).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def plain_lower(func, arch: str) -> None:
    import tilelang
    from tvm.target import Target

    target = Target({"kind": "cuda", "arch": arch})
    configs = {tilelang.PassConfigKey.TL_EMIT_LINE_DIRECTIVES: True}
    with tilelang.transform.PassContext(opt_level=3, config=configs), target:
        tilelang.lower(func, target=target, enable_device_compile=False, enable_host_codegen=True)


def median_seconds(action, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()

    from kernels import matmul

    import tilelab

    func = matmul.get_tir()
    plain_lower(func, options.arch)  # warm both paths once
    tilelab.explore(matmul, arch=options.arch)
    # Interleave so that machine noise hits both alike.
    lower_s, explore_s = [], []
    for _ in range(options.repeat):
        lower_s.append(median_seconds(lambda: plain_lower(func, options.arch), 1))
        explore_s.append(median_seconds(lambda: tilelab.explore(matmul, arch=options.arch), 1))
    lower, explore = statistics.median(lower_s), statistics.median(explore_s)
    print(f"GEMM 1024^3 fp16 for {options.arch}: tilelang.lower {lower * 1000:.0f} ms, tilelab.explore {explore * 1000:.0f} ms")
    print(f"ratio explore / lower = {explore / lower:.2f} (goal <= 1.3)")


if __name__ == "__main__":
    main()
