"""What machine code adds to ``tilelab.explore`` of the sm_90a quickstart GEMM, cold and warm cache (CPU only).

    .venv/bin/python bench/bench_machine_code.py [--repeat 5]

Prints the median explore time without machine code, with it on a cold cache
(an empty cache directory each run) and on a warm one, and nvcc's own phase
times (``nvcc --time``) for the same device source.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def _timed(function) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def _nvcc_phases(device_source: str) -> list[str]:
    from tilelab.machine.build import _include_dirs, find_tool

    with tempfile.TemporaryDirectory() as directory:
        source, times = Path(directory) / "kernel.cu", Path(directory) / "times.csv"
        source.write_text(device_source)
        includes = [f"-I{path}" for path in _include_dirs()]
        command = [find_tool("nvcc"), "--cubin", "-O3", "-w", "-lineinfo", "-arch=sm_90a", "-std=c++20", *includes]
        subprocess.run([*command, "-Xptxas", "-v", "--time", str(times), "-o", f"{directory}/k.cubin", str(source)],
                       check=True, capture_output=True)
        rows = [line.split(",") for line in times.read_text().splitlines()[1:]]
        phases = [f"{row[1].strip() or 'ptx check'} {float(row[6]) / 1000:.3f} s" for row in rows if len(row) > 6]
        nvdisasm = find_tool("nvdisasm")
        if nvdisasm:
            seconds = _timed(lambda: subprocess.run([nvdisasm, "-c", "-gi", f"{directory}/k.cubin"], capture_output=True))
            phases.append(f"nvdisasm -c -gi {seconds:.3f} s")
        return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()

    from kernels import matmul

    import tilelab

    def explore(machine_code: bool):
        return tilelab.explore(matmul, arch="sm_90", machine_code=machine_code)

    with tempfile.TemporaryDirectory() as root:
        explore(False)  # imports, TileLang's parser: paid once per process
        times: dict[str, list[float]] = {"without machine code": [], "cold cache": [], "warm cache": []}
        for run in range(options.repeat):  # interleaved: the machine's load drifts
            os.environ["TILELAB_CACHE_DIR"] = f"{root}/cache{run}"
            times["without machine code"].append(_timed(lambda: explore(False)))
            times["cold cache"].append(_timed(lambda: explore(True)))
            times["warm cache"].append(_timed(lambda: explore(True)))
        record = explore(True)
    print(f"cpus: {os.cpu_count()}, load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    base = times["without machine code"]
    for name, runs in times.items():
        ratio = statistics.median(t / b for t, b in zip(runs, base, strict=True))
        listed = " ".join(f"{t:.3f}" for t in runs)
        print(f"{name:22} median {statistics.median(runs):.3f} s ({ratio:.2f}x of without, run by run)  runs: {listed}")
    print("nvcc phases:", "; ".join(_nvcc_phases(record.source.device)))


if __name__ == "__main__":
    main()
