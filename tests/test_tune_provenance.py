"""Every tuning row says who served its compile and what TileLang's key was made of (in ``to_pandas()`` and the
history), and any row, a failed config's first, gives a standalone reproducer of its config."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import tilelab
from tilelab.provenance import COMPONENTS, PROVENANCE_COLUMNS
from tilelab.tune.result import TuneStatus
from tilelab.tune.store import SCHEMA_VERSION, TuningStore

WITHOUT_TILELAB = "import runpy, sys; sys.modules['tilelab'] = None; sys.argv = [{path!r}]; runpy.run_path({path!r}, run_name='__main__')"


def sweep(db: Path, **kwargs):
    from tune_kernels import scale_add

    return tilelab.tune(
        scale_add, block=tilelab.choices([0, 32, 64]), reference=lambda a, b: 2 * a + b, timeout=60, db=db, live=False, **kwargs
    )


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    db = tmp_path_factory.mktemp("provenance") / "history.db"
    first = sweep(db)
    again = sweep(db, force=True)  # measured again: every config compiled before
    return db, first, again


def test_every_row_says_who_served_its_compile_and_the_keys_components(sweeps):
    _, first, again = sweeps

    frame = first.to_pandas()

    assert list(frame.columns[-len(PROVENANCE_COLUMNS) :]) == list(PROVENANCE_COLUMNS)
    compiled = frame[frame["status"] == "ok"]
    assert len(compiled) == 2 and set(compiled["cache"]) <= {"fresh", "disk", "memory"}
    for entry, key in zip(compiled["cache_entry"], compiled["cache_key"], strict=True):
        assert Path(entry).name == key and Path(entry).is_dir()  # TileLang's own entry for that key
    assert all(len(value) == 12 for name in COMPONENTS for value in compiled[f"key_{name}"])
    assert compiled["key_tir"].nunique() == 2 and compiled["key_source"].nunique() == 1
    measured_again = again.to_pandas()
    assert set(measured_again[measured_again["status"] == "ok"]["cache"]) <= {"disk", "memory"}  # compiled before
    assert tilelab.why(first.rows[1], first.rows[2]).text() == "recompiled: TIR changed"


def test_the_history_keeps_the_provenance_columns(sweeps):
    db, first, _ = sweeps

    history = tilelab.tuning_history(db=db)

    stored = history[history["run_id"] == first.id].set_index("block").astype(object)
    stored = stored.where(stored.notna(), None)
    for row in first.rows.values():
        assert [stored.loc[row.config["block"], name] for name in PROVENANCE_COLUMNS] == [getattr(row, name) for name in PROVENANCE_COLUMNS]
    assert stored.loc[32, "cache_key"] is not None and stored.loc[0, "cache_key"] is None  # block 0 did not elaborate


def test_a_format_4_history_gains_the_provenance_columns_in_place(tmp_path):
    db = tmp_path / "history.db"
    TuningStore(db)
    with sqlite3.connect(db) as conn:  # back to format 4: no provenance columns
        for name in PROVENANCE_COLUMNS:
            conn.execute(f"ALTER TABLE tuning_rows DROP COLUMN {name}")
        conn.execute("PRAGMA user_version = 4")

    TuningStore(db)

    with sqlite3.connect(db) as conn:
        columns = {column[1] for column in conn.execute("PRAGMA table_info(tuning_rows)")}
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert set(PROVENANCE_COLUMNS) <= columns


def run_reproducer(path: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TILELANG_CACHE_DIR": str(cache)}
    env.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, "-I", "-c", WITHOUT_TILELAB.format(path=str(path))], cwd=path.parent, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_a_failed_configs_row_points_to_its_reproducer_which_fails_the_same_way(sweeps, tmp_path):
    _, first, _ = sweeps
    failed = first.rows[0]
    assert failed.status is TuneStatus.COMPILE_ERROR and failed.config == {"block": 0}

    path = tmp_path / "repro_block_0.py"
    path.write_text(failed.repro())
    done = run_reproducer(path, tmp_path / "cache")

    assert "a failed config's reproducer: result.rows[0].repro()" in " ".join(first.notes)
    assert "'block': 0," in path.read_text() and f"#   error: {failed.error.splitlines()[0]}" in path.read_text()
    assert done.returncode == 1 and "REPRODUCED: the error TileLab observed" in done.stdout, done.stdout + done.stderr


def test_an_ok_rows_reproducer_checks_against_the_sweeps_reference(sweeps, tmp_path):
    _, first, _ = sweeps
    path = tmp_path / "repro_block_32.py"
    path.write_text(first.repro({"block": 32}))

    done = run_reproducer(path, tmp_path / "cache")

    assert "reference = lambda a, b: 2 * a + b" in path.read_text()
    assert done.returncode == 0 and "passed: matches the reference" in done.stdout, done.stdout + done.stderr
