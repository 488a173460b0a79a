"""The benchmark suite in smoke mode: tiny shapes, lowering only without a GPU, well-formed results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

ENV_KEYS = ("device", "driver", "cuda", "nvcc", "torch", "tilelang", "python", "cpus", "date")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """One smoke run of ``bench/run_suite.py`` into a temporary directory: (stdout, results-<device>.json, .md).
    Its lowering-only sweeps build no machine code (``TILELAB_MACHINE_CODE=0``): nothing here reads their
    resource columns, which tests/test_tune_lowering.py checks."""
    out = tmp_path_factory.mktemp("suite") / "results"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run_suite.py"), "--smoke", "--out", str(out)],
        capture_output=True, text=True, timeout=240, cwd=ROOT, env={**os.environ, "TILELAB_MACHINE_CODE": "0"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (json_path,) = out.glob("results-*.json")
    return done.stdout, json.loads(json_path.read_text()), json_path.with_suffix(".md").read_text()


@pytest.mark.slow
def test_smoke_run_writes_a_row_per_problem_with_its_environment(smoke):
    _, report, _ = smoke

    sections = [row["section"] for row in report["rows"]]
    assert report["format"] == 2 and report["sections"] == ["gemm", "attention", "overhead"]
    assert sections == ["gemm", "attention", "overhead"]
    for row in report["rows"]:
        assert all(key in row for key in ENV_KEYS), row
        assert row["tilelang"] and row["torch"] and row["date"]


@pytest.mark.slow
def test_smoke_tuned_rows_record_the_space_the_budget_and_every_config_tried(smoke):
    _, report, _ = smoke
    import torch

    tuned = [row for row in report["rows"] if row["section"] != "overhead"]
    expected = "ok" if torch.cuda.is_available() else "lowered"
    for row in tuned:
        assert row["status"] == expected, row
        assert row["configs_tried"] == row["space"] == row["budget"] == len(row["configs"])
        assert row["plan"]["budget"] == row["budget"] and row["plan"]["spent_s"] > 0
        assert all(config["status"] == "ok" and config["compile_s"] > 0 for config in row["configs"])


@pytest.mark.slow
def test_smoke_gemm_compiles_the_role_based_unspecialised_and_split_k_kernels(smoke):
    _, report, _ = smoke

    gemm = report["rows"][0]
    assert {(c["config"]["ws"], c["config"]["split_k"]) for c in gemm["configs"]} == {("role_based", 1), ("off", 1), ("auto", 2)}


@pytest.mark.slow
def test_smoke_on_a_gpu_checks_each_winner_against_torch(smoke):
    _, report, _ = smoke
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no GPU: nothing runs, so nothing is checked")
    for row in report["rows"][:-1]:
        assert row["checked"]["passed"] and row["speedup"] > 0, row


@pytest.mark.slow
def test_smoke_without_gpu_skips_call_overhead_and_says_why(smoke):
    stdout, report, markdown = smoke
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present: call overhead is measured, not skipped")
    overhead = report["rows"][-1]
    assert overhead["status"] == "skipped" and "no CUDA device" in overhead["note"]
    assert "[overhead] skipped: no CUDA device" in stdout
    assert "Not measured: no CUDA device" in markdown


@pytest.mark.slow
def test_smoke_markdown_has_the_goals_and_one_table_per_tuned_section(smoke):
    stdout, report, markdown = smoke

    assert markdown in stdout  # printed at the end, as written
    assert "## Goals" in markdown and markdown.count("| **geomean** |") == 2
    assert [goal["section"] for goal in report["goals"]] == ["gemm", "attention", "overhead"]
    for row in report["rows"][:-1]:
        assert f"| {row['problem']} |" in markdown


def test_goals_compare_geomean_of_speedups_and_overhead_with_their_targets():
    import suite_report

    rows = [
        {"section": "gemm", "speedup": 0.9},
        {"section": "gemm", "speedup": 1.2},
        {"section": "attention", "speedup": 1.21},
        {"section": "attention", "status": "skipped"},
        {"section": "overhead", "status": "ok", "tilelab_us": 10.4, "direct_us": 9.8},
    ]

    goals = {g["section"]: g for g in suite_report.evaluate_goals(rows, ["gemm", "attention", "overhead"])}

    assert goals["gemm"]["measured"] == pytest.approx((0.9 * 1.2) ** 0.5) and goals["gemm"]["met"] is True
    assert goals["attention"]["met"] is True and "1/2 problems" in goals["attention"]["shown"]
    assert goals["overhead"]["measured"] == pytest.approx(0.6) and goals["overhead"]["met"] is True


def test_goals_are_unmeasured_when_nothing_was_timed():
    import suite_report

    goals = suite_report.evaluate_goals([{"section": "gemm", "status": "lowered"}], ["gemm"])

    assert goals == [{"section": "gemm", "goal": "GEMM geomean vs torch.matmul", "target": "≥ 1.00×", "measured": None, "shown": "not measured", "met": None}]


def test_config_labels_read_the_gemm_knobs_as_words_and_leave_out_non_persistent():
    import suite_report

    plain = {"block_M": 128, "num_stages": 3, "policy": "Square", "epilogue": "registers", "persistent": False}
    persistent = {"block_M": 128, "num_stages": 3, "policy": "FullRow", "epilogue": "shared", "persistent": True}

    assert suite_report._config(plain) == "M=128 stages=3 Square registers epilogue"
    assert suite_report._config(persistent) == "M=128 stages=3 FullRow shared epilogue persistent"


def test_merge_puts_a_fetched_sections_file_into_the_devices_report(tmp_path):
    import run_suite

    env = {"device": "NVIDIA H200", "driver": None, "cuda": None, "nvcc": None, "torch": "2", "tilelang": "0.1.15",
           "python": "3.12", "cpus": 16, "date": "2026-11-26"}  # fmt: skip
    fetched = tmp_path / "fetched.json"
    row = {"section": "attention", "problem": "seq 512", "status": "ok", "speedup": 1.2}
    fetched.write_text(json.dumps({"format": 2, "env": env, "rows": [row], "runs": {"attention": {"budget_s": 420.0, "wall_s": 400.0}}}))

    assert run_suite.main(["--merge", str(fetched), "--out", str(tmp_path / "results")]) == 0

    merged = json.loads((tmp_path / "results" / "results-h200.json").read_text())
    assert merged["rows"] == [row] and merged["goals"][0]["met"] is True


@pytest.mark.parametrize(
    ("argv", "says"),
    [(["--section", "gemm,tensors"], "--section takes gemm,attention,overhead"), (["--budget-s", "0"], "--budget-s must be positive")],
)
def test_a_bad_section_or_budget_is_refused_in_one_line_before_anything_runs(argv, says, capsys):
    import run_suite

    with pytest.raises(SystemExit) as stopped:
        run_suite.main(argv)

    assert stopped.value.code == 2
    assert says in capsys.readouterr().err.strip().splitlines()[-1]
