"""``bench/bench_cluster.py --smoke``: the cluster benchmark's runs (1 host, 2 hosts, 1 GPU with all CPUs), end to end on the CPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_cluster_benchmark_smoke_run_writes_every_run_and_the_speedups(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_cluster.py"), "--smoke", "--out", str(tmp_path), "--cpus-per-host", "1"],
        capture_output=True, text=True, timeout=240, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "cluster.json").read_text())
    one, two, one_all_cpus = report["runs"]

    assert report["engine"] == "dask" and report["smoke"] and report["device"].startswith("cpu: ")
    assert [run["gpus"] for run in report["runs"]] == [1, 2, 1]
    assert [run["compile_threads"] for run in report["runs"]] == [1, 2, 2]
    assert all(run["statuses"] == {"ok": report["configs"]} for run in report["runs"])
    assert (
        report["configs_per_s_1gpu"] == one["configs_per_s"] > 0
        and report["configs_per_s_2gpu"] == two["configs_per_s"] > 0
    )
    assert report["speedup_2gpu_vs_1gpu"] == pytest.approx(two["configs_per_s"] / one["configs_per_s"])
    assert report["speedup_2gpu_vs_1gpu_same_cpus"] == pytest.approx(
        two["configs_per_s"] / one_all_cpus["configs_per_s"]
    )
    assert report["best_config_1gpu"] == one["best_config"] and report["best_config_2gpu"] == two["best_config"]
    assert one["best_ms"] > 0 and two["best_ms"] > 0
