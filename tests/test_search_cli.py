"""`%tilelang tune` and `tilelab tune` take --search, --budget, --seed and --sampler (real CPU sweeps)."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent


def test_the_tune_line_runs_a_seeded_search_with_a_budget(ip, tmp_path):
    from search_kernels import axpy_repeat

    ip.user_ns["axpy_repeat"] = axpy_repeat
    line = f"tune axpy_repeat block=32,64,128,256 chunk=1,4 --search optuna --budget 3 --seed 0 --sampler random --db '{tmp_path / 'h.db'}'"

    result = ip.run_line_magic("tilelang", line)

    assert (result.search.kind, result.search.sampler, result.search.seed, result.search.budget) == ("optuna", "random", 0, 3)
    assert sorted(row.trial for row in result.rows.values()) == [0, 1, 2]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("tune axpy_repeat block=32,64 --search bayes", "search='bayes': expected one of"),
        ("tune axpy_repeat block=32,64 --search optuna --budget 0", "budget=0: expected at least 1 config"),
        ("tune axpy_repeat block=32,64 --budget", "'--budget' needs a value"),
    ],
)
def test_bad_search_options_on_the_tune_line_are_one_line_usage_errors(ip, line, says):
    from IPython.core.error import UsageError
    from search_kernels import axpy_repeat

    ip.user_ns["axpy_repeat"] = axpy_repeat
    with pytest.raises(UsageError, match=says) as error:
        ip.run_line_magic("tilelang", line)

    assert "\n" not in str(error.value)


def test_the_command_line_writes_the_trial_of_every_row(tmp_path):
    shutil.copy(TESTS / "search_kernels.py", tmp_path / "search_kernels.py")

    done = subprocess.run(
        [sys.executable, "-m", "tilelab", "tune", "search_kernels.py::axpy_repeat", "block=32,64,128,256", "chunk=1,4",
         "--target", "c", "--search", "optuna", "--budget", "0.25", "--seed", "1", "--db", str(tmp_path / "h.db"),
         "--out", "rows.csv"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    with (tmp_path / "rows.csv").open() as file:
        rows = list(csv.DictReader(file))
    assert sorted(int(row["trial"]) for row in rows) == [0, 1]  # a quarter of 8 configs
    assert {row["chosen_by"] for row in rows} == {"sampler"}
    assert "2/2 configs" in done.stdout


def test_the_command_line_refuses_a_budget_that_is_not_a_number(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "tilelab", "tune", "k.py::k", "--budget", "lots"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )

    assert done.returncode != 0 and "'lots': expected a number of configs or a fraction" in done.stderr
