"""The tuner race in smoke mode: both tools on a CPU space, each in its own process and cold cache, then the
report the GPU run writes (bench/results/tune_race.json) with its ratios, statuses and timeline summary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def race(tmp_path_factory):
    """One smoke run of ``bench/bench_tune_race.py``: (stdout, the JSON report)."""
    out = tmp_path_factory.mktemp("race") / "tune_race.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_tune_race.py"), "--smoke", "--out", str(out)],
        capture_output=True, text=True, timeout=900, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout, json.loads(out.read_text())


@pytest.mark.slow
def test_smoke_race_reports_both_tools_on_the_same_configs_with_their_ratios(race):
    _, report = race
    (space,) = report["spaces"]

    assert report["device"] == "cpu (smoke)" and space["name"] == "cpu-scale-add" and space["configs"] == 4
    assert space["statuses"]["tilelab"] == {"ok": 4} and space["statuses"]["tilelang"] == {"best found": 1}
    assert space["wall_ratio"] == pytest.approx(space["tilelab"]["wall_s"] / space["tilelang"]["wall_s"])
    mine, theirs = space["retime"]["best_ms"]
    assert space["retime_ratio"] == pytest.approx(mine / theirs)
    same = space["tilelab"]["best_config"] == space["tilelang"]["best_config"]
    assert space["same_best_config"] == same and space["best_ratio"] == (1.0 if same else space["retime_ratio"])
    assert {space["tilelab"]["best_config"]["block"], space["tilelang"]["best_config"]["block"]} <= {16, 32, 64, 128}
    assert not any(Path(space[tool]["cache"]).exists() for tool in ("tilelab", "tilelang"))  # cold caches, removed


@pytest.mark.slow
def test_smoke_race_says_where_tilelabs_time_went_and_how_fast_a_second_sweep_starts(race):
    stdout, report = race
    (space,) = report["spaces"]
    tilelab = space["tilelab"]

    assert space["timeline_summary"].startswith("compile ") and "critical path: " in space["timeline_summary"]
    assert "from the warm pool" in tilelab["second_sweep_summary"]
    started = tilelab["worker_start"]  # how its cold workers started, and why the zygote did not serve if so
    assert started["forked"] + started["spawned"] >= 1 and set(started) >= {"why_spawned", "zygote_import_s"}
    assert ("forked by the zygote" in space["timeline_summary"]) == (started["forked"] > 0)
    assert (f"{started['spawned']} spawned" in space["timeline_summary"]) == (started["spawned"] > 0)
    assert f"{space['name']}: workers started: " in stdout
    assert report["second_sweep_first_compile_s"] == tilelab["second_sweep_first_compile_s"] > 0
    assert set(report["met"]) == {"wall_ratio", "best_ratio", "second_sweep_first_compile_s"}
    assert "second sweep's first compile after" in stdout


def test_reports_of_separate_runs_merge_with_the_later_run_of_a_space_winning():
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_tune_race

    def space(name, wall_ratio, second_s):
        return {"name": name, "wall_ratio": wall_ratio, "best_ratio": 1.0, "tilelab": {"second_sweep_first_compile_s": second_s}}

    first = {"device": "NVIDIA H100 80GB HBM3", "cpus": 16, "spaces": [space("gemm", 0.2, 0.1), space("attention", 0.09, 0.2)]}
    second = {"device": "NVIDIA H100 80GB HBM3", "cpus": 16, "spaces": [space("gemm", 0.08, 0.3)]}

    merged = bench_tune_race._merged([first, second])

    assert [(s["name"], s["wall_ratio"]) for s in merged["spaces"]] == [("gemm", 0.08), ("attention", 0.09)]
    assert merged["met"] == {"wall_ratio": True, "best_ratio": True, "second_sweep_first_compile_s": True}
    assert merged["second_sweep_first_compile_s"] == 0.3 and merged["device"] == "NVIDIA H100 80GB HBM3"
