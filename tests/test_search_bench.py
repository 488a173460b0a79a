"""bench/bench_search.py in smoke mode: a small CPU space, real grid and searches, a well-formed search.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("search") / "search.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_search.py"), "--smoke", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(out.read_text()), done.stdout


@pytest.mark.slow
def test_smoke_run_writes_the_issues_structure(report):
    data, stdout = report

    assert {"device", "spaces", "goal", "goal_met", "mode"} <= set(data) and data["mode"] == "smoke"
    (space,) = data["spaces"]
    assert {"name", "configs", "fraction_of_grid", "best_ratio", "grid", "search", "replay"} <= set(space)
    assert space["name"] == "cpu12" and space["configs"] == 12
    assert "wrote " in stdout and "cpu12" in stdout


@pytest.mark.slow
def test_smoke_search_runs_stay_within_their_budget_and_say_how_they_compare(report):
    data, _ = report
    (space,) = data["spaces"]
    runs = space["search"]["runs"]

    assert [run["seed"] for run in runs] == [0, 1]
    assert all(run["trials"] <= 4 for run in runs)  # 30 % of 12, rounded up
    assert all(len(run["best_after_each_benchmark"]) == run["benchmarks"] for run in runs)
    assert all(run["best_ratio"] > 0 for run in runs)
    assert space["grid"]["benchmarks"] == 12 and space["grid"]["within_2_percent"] >= 1
    for sampler in ("tpe", "gp", "random"):
        fractions = space["replay"][sampler]["fractions"]
        assert len(fractions) == 2 and all(f is None or 0 < f <= 1 for f in fractions)


@pytest.mark.slow
def test_smoke_warm_started_searches_try_the_nearby_shapes_best_first(report):
    data, _ = report
    (space,) = data["spaces"]
    warm = space["warm_start"]

    assert warm["nearby_args"] == [1 << 15] and warm["nearby_best_config"]
    assert [run["seed"] for run in warm["runs"]] == [0, 1]
    assert all(warm["nearby_best_config"] in run["warm_start_configs"] for run in warm["runs"])
    assert space["fraction_of_grid_warm_start"] == warm["fraction_of_grid"]
