"""``bench/bench_cluster.py --smoke``: the two-run cluster benchmark, end to end on the CPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_cluster_benchmark_smoke_run_writes_both_runs_and_the_speedup(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_cluster.py"), "--smoke", "--out", str(tmp_path), "--compile-threads", "1"],
        capture_output=True, text=True, timeout=240, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "cluster.json").read_text())
    one, two = report["runs"]

    assert report["engine"] == "dask" and report["smoke"] and report["device"].startswith("cpu: ")
    assert [one["gpus"], two["gpus"]] == [1, 2] and one["statuses"] == two["statuses"] == {"ok": report["configs"]}
    assert report["configs_per_s_1gpu"] == one["configs_per_s"] > 0 and report["configs_per_s_2gpu"] == two["configs_per_s"] > 0
    assert report["speedup_2gpu_vs_1gpu"] == pytest.approx(two["configs_per_s"] / one["configs_per_s"])
    assert report["best_config_1gpu"] == one["best_config"] and report["best_config_2gpu"] == two["best_config"]
    assert one["best_ms"] > 0 and two["best_ms"] > 0
