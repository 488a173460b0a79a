"""The suite's attention winners and SDPA at the same shapes, one launch each, for Nsight Compute to compare.

    ncu --csv --page details --section SpeedOfLight --section Occupancy --section LaunchStats \\
        --section WarpStateStats --section ComputeWorkloadAnalysis -k 'regex:attention|sdpa|fmha|flash|fprop' \\
        python3 bench/attention_counters.py --results bench/results/results-h200.json --seq 1024 4096 > counters.csv

For each sequence length: the winner of the suite's non-causal row (its ``best_config``, from the results file
of ``run_suite.py``) is built, run once and checked against ``F.scaled_dot_product_attention`` on the same
inputs, which runs once too. ``bench/notes_vendor_speed.md`` reads the H200's counters.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import tilelang  # noqa: F401  (before torch and tvm: it bundles its own TVM)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import suite_kernels  # noqa: E402  (needs the path above)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def winner(results: dict, seq: int) -> dict:
    """The suite's non-causal attention row at ``seq``."""
    for row in results["rows"]:
        shape = row.get("shape", {})
        if row.get("section") == "attention" and shape.get("seq") == seq and not shape.get("causal"):
            return row
    raise SystemExit(f"no non-causal attention row at seq {seq} in the results file")


def run_once(row: dict) -> float:
    """Build the row's winner, run it and SDPA once on the same inputs; the largest difference."""
    shape = row["shape"]
    kernel = suite_kernels.flash_attention(shape["batch"], shape["heads"], shape["seq"], shape["dim"], False, **row["best_config"])
    q, k, v = (
        torch.empty(shape["batch"], shape["seq"], shape["heads"], shape["dim"], device="cuda", dtype=torch.float16).uniform_(-1, 1)
        for _ in range(3)
    )
    out = kernel(q, k, v)
    torch.cuda.synchronize()
    reference = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)
    torch.cuda.synchronize()
    return (out - reference).abs().max().item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, required=True, help="a results-<device>.json of run_suite.py")
    parser.add_argument("--seq", type=int, nargs="+", default=[1024, 4096])
    options = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("attention_counters.py runs the kernels: it needs a CUDA GPU")
    results = json.loads(options.results.read_text())
    for seq in options.seq:
        row = winner(results, seq)
        print(f"seq {seq}: {row['best_config']}, max difference from SDPA {run_once(row):.3g}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
