"""The tuning history keeps how each row was timed: the method, repetitions, the noise band of the median
and the first timing of a confirmed config; a re-run reads them back, and a history of the fifth format
gains the columns in place. Real CPU-target sweeps, timed by a seeded fake timer (tune()'s ``timer`` hook).
"""

from __future__ import annotations

import sqlite3

import pytest
from tune_kernels import scale_add
from tune_timers import FlukeTimer

import tilelab
from tilelab.tune.row import TRUST_COLUMNS
from tilelab.tune.store import SCHEMA_VERSION
from tilelab.tune.store.schema import ADDED_IN_6


def _tune(db, blocks=(32, 64, 128)):
    timer = FlukeTimer({32: 1.0, 64: 2.0, 128: 1.2, 256: 3.0}, fluke=64, fast=0.5)
    return tilelab.tune(scale_add, block=tilelab.choices(list(blocks)), timer=timer, workers=1, timeout=60, db=db)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    db = tmp_path_factory.mktemp("timing") / "history.db"
    return db, _tune(db)


def _sql(db, query: str) -> list:
    with sqlite3.connect(db) as conn:
        return conn.execute(query).fetchall()


def test_the_stored_columns_are_the_rows_timing_columns():
    assert tuple(name for name, _ in ADDED_IN_6) == TRUST_COLUMNS


def test_the_history_keeps_how_every_row_was_timed(swept):
    db, result = swept
    history = tilelab.tuning_history("scale_add", db=db).set_index("block")

    for row in result.rows.values():
        stored = history.loc[row.config["block"]]
        assert stored["timing"] == "timer FlukeTimer" and stored["repetitions"] == row.repetitions
        assert stored["noise_low_ms"] == pytest.approx(row.noise_low_ms) and stored["noise_high_ms"] == pytest.approx(row.noise_high_ms)
        assert stored["noise_low_ms"] <= stored["latency_median_ms"] <= stored["noise_high_ms"]
    assert history.loc[64, "first_ms"] == pytest.approx(0.5)  # confirmed: its first timing, then 2 ms
    assert history["first_ms"].drop(64).isna().all()


def test_a_rerun_reads_the_timing_columns_back(swept):
    db, first = swept
    again = _tune(db)

    assert all(row.cached for row in again.rows.values())
    for index, row in again.rows.items():
        assert {name: getattr(row, name) for name in TRUST_COLUMNS} == {name: getattr(first.rows[index], name) for name in TRUST_COLUMNS}


def test_a_history_of_the_fifth_format_gains_the_timing_columns_and_keeps_its_rows(swept, tmp_path):
    db, first = swept
    old = tmp_path / "fifth.db"
    with sqlite3.connect(db) as source, sqlite3.connect(old) as copy:
        source.backup(copy)
    with sqlite3.connect(old) as conn:  # back to format 5: no timing columns
        for name in TRUST_COLUMNS:
            conn.execute(f"ALTER TABLE tuning_rows DROP COLUMN {name}")
        conn.execute("PRAGMA user_version = 5")

    assert "timing" not in tilelab.tuning_history(db=old).columns  # readable as it is
    again = _tune(old, blocks=(32, 64, 128, 256))

    assert sorted(row.config["block"] for row in again.rows.values() if not row.cached) == [256]
    assert again.rows[0].latency_ms == first.rows[0].latency_ms and again.rows[0].timing is None
    assert _sql(old, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert _sql(old, "SELECT timing FROM tuning_rows WHERE json_extract(config, '$.block') = 256") == [("timer FlukeTimer",)]
