"""The tuning history on a real PostgreSQL server: the same rows, schema, migrations and checks as SQLite."""

from __future__ import annotations

import sys
import threading

import pandas as pd
import pytest
from tune_kernels import kernel_module

import tilelab
from tilelab.tune.result import TRUST_COLUMNS, TuneRow, TuneStatus
from tilelab.tune.store import SCHEMA_VERSION, RunKey, TuningStore
from tilelab.tune.store.schema import ADDED_IN_3

KEY = RunKey.of("scale_add", "def scale_add(): ...", "{}", '{"kind": "c"}', "cpu: test")


@pytest.fixture
def url(postgres_server):
    return postgres_server.database()


def _sql(url: str, query: str, *params) -> list:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(query, params or None)
        return cursor.fetchall() if cursor.description else []


def test_a_sweep_named_by_tilelab_db_stores_its_rows_in_postgres_and_a_rerun_reads_them(url, monkeypatch):
    from tune_kernels import scale_add

    monkeypatch.setenv("TILELAB_DB", url)
    first = tilelab.tune(scale_add, block=tilelab.choices([0, 32]), reference=lambda a, b: 2 * a + b)
    again = tilelab.tune(scale_add, block=tilelab.choices([0, 32]), reference=lambda a, b: 2 * a + b)
    history = tilelab.tuning_history("scale_add")

    assert sorted(zip(history["block"], history["status"], strict=True)) == [(0, "compile_error"), (32, "ok")]
    assert set(history["run_id"]) == {first.id}
    assert all(row.cached for row in again.rows.values())
    assert again.rows[1].latency_ms == first.rows[1].latency_ms


def test_postgres_and_sqlite_histories_have_the_same_columns_and_values(url, tmp_path):
    rows = [
        TuneRow(0, {"block": 32}, TuneStatus.OK, latency_ms=0.0123456789, gbps=12.5, compile_s=0.6, bench_s=0.2, repetitions=50),
        TuneRow(1, {"block": 0}, TuneStatus.COMPILE_ERROR, error="Divide by zero (100% sure?)", compile_s=0.1),
    ]
    frames = []
    for store in (TuningStore(url), TuningStore(tmp_path / "history.db")):
        for row in rows:
            store.write(KEY, "run-1", row, "0.1.15", 60.0)
        frames.append(store.frame().drop(columns=["id", "created"]))

    in_postgres, in_sqlite = frames
    assert list(in_postgres.columns) == list(in_sqlite.columns)
    pd.testing.assert_frame_equal(in_postgres, in_sqlite)  # values and dtypes


def test_a_second_format_postgres_history_is_migrated_by_the_same_migrations(url):
    TuningStore(url).write(KEY, "old-run", TuneRow(0, {"block": 32}, TuneStatus.OK, latency_ms=0.5), "0.1.15", 60.0)
    for name, _ in ADDED_IN_3:  # back to format 2
        _sql(url, f"ALTER TABLE tuning_rows DROP COLUMN {name}")
    _sql(url, "UPDATE tilelab_format SET version = 2")

    measured = TuningStore(url).measured(KEY)

    assert _sql(url, "SELECT version FROM tilelab_format") == [(SCHEMA_VERSION,)]
    columns = {name for (name,) in _sql(url, "SELECT column_name FROM information_schema.columns WHERE table_name = 'tuning_rows'")}
    assert {name for name, _ in ADDED_IN_3} <= columns
    assert measured['{"block": 32}'].row.latency_ms == 0.5


def test_a_third_format_postgres_history_gains_the_roofline_column(url):
    TuningStore(url).write(KEY, "old-run", TuneRow(0, {"block": 48}, TuneStatus.OK, latency_ms=0.5), "0.1.15", 60.0)
    _sql(url, "ALTER TABLE tuning_rows DROP COLUMN roofline_ms")  # back to format 3
    _sql(url, "UPDATE tilelab_format SET version = 3")

    measured = TuningStore(url).measured(KEY)

    assert _sql(url, "SELECT version FROM tilelab_format") == [(SCHEMA_VERSION,)]
    columns = {name for (name,) in _sql(url, "SELECT column_name FROM information_schema.columns WHERE table_name = 'tuning_rows'")}
    assert "roofline_ms" in columns and measured['{"block": 48}'].row.roofline_ms is None


def test_a_fifth_format_postgres_history_gains_the_timing_columns_and_the_rows_keep_them(url):
    timed = TuneRow(0, {"block": 64}, TuneStatus.OK, latency_ms=2.0, repetitions=55, timing="timer FlukeTimer",
                    noise_low_ms=1.9, noise_high_ms=2.1, first_ms=0.5)  # fmt: skip
    TuningStore(url).write(KEY, "old-run", TuneRow(0, {"block": 48}, TuneStatus.OK, latency_ms=0.5), "0.1.15", 60.0)
    for name in TRUST_COLUMNS:  # back to format 5
        _sql(url, f"ALTER TABLE tuning_rows DROP COLUMN {name}")
    _sql(url, "UPDATE tilelab_format SET version = 5")

    store = TuningStore(url)
    store.write(KEY, "new-run", timed, "0.1.15", 60.0)
    measured = store.measured(KEY)

    assert _sql(url, "SELECT version FROM tilelab_format") == [(SCHEMA_VERSION,)]
    assert measured['{"block": 48}'].row.timing is None and measured['{"block": 48}'].row.latency_ms == 0.5
    stored = measured['{"block": 64}'].row
    assert {name: getattr(stored, name) for name in TRUST_COLUMNS} == {name: getattr(timed, name) for name in TRUST_COLUMNS}


def test_a_first_format_postgres_history_gets_its_time_limits_and_crashes_back(url):
    store = TuningStore(url)
    store.write(KEY, "old-run", TuneRow(0, {"block": 96}, TuneStatus.TIMEOUT, "compile did not finish within 60 s; the worker was killed"))
    store.write(KEY, "old-run", TuneRow(1, {"block": 8}, TuneStatus.COMPILE_ERROR, "compile worker died (exit code -9)"))
    for name in ("timeout_s", *(name for name, _ in ADDED_IN_3)):  # back to format 1
        _sql(url, f"ALTER TABLE tuning_rows DROP COLUMN {name}")
    _sql(url, "UPDATE tilelab_format SET version = 1")

    TuningStore(url)

    stored = _sql(url, "SELECT config, status, timeout_s FROM tuning_rows ORDER BY id")
    assert stored == [('{"block": 96}', "timeout", 60.0), ('{"block": 8}', "crashed", None)]


@pytest.fixture
def marked(tmp_path):
    """A kernel that leaves a file behind when it is elaborated, i.e. when anything compiles."""
    try:
        yield kernel_module(tmp_path, "pg_marked_kernel", "pg_marked", body="(HERE / 'elaborated').touch()"), tmp_path / "elaborated"
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("pg_marked_kernel", None)


def _newer(url: str) -> str:
    TuningStore(url)
    _sql(url, "UPDATE tilelab_format SET version = 99")
    return url


def _foreign(url: str) -> str:
    _sql(url, "CREATE TABLE tuning_rows (song TEXT)")
    return url


def _unreachable(url: str) -> str:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"postgresql://tilelab:s3cret@127.0.0.1:{port}/nowhere"


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_newer, "format 99, newer than this TileLab reads"),
        (_foreign, "has a tuning_rows table that is not TileLab's"),
        (_unreachable, r"cannot be used \(connection"),
    ],
    ids=["newer-format", "another-programs-table", "unreachable-server"],
)
def test_an_unusable_postgres_history_fails_before_anything_compiles(marked, url, make, says):
    kernel, elaborated = marked
    db = make(url)

    with pytest.raises(ValueError, match=says) as error:
        tilelab.tune(kernel, block=tilelab.choices([32, 64]), db=db)

    message = str(error.value)
    assert "s3cret" not in message and db.replace(":s3cret", "") in message
    assert "db=':memory:'" in message and "\n" not in message
    assert not elaborated.exists()


def test_reading_the_history_of_an_empty_postgres_database_creates_nothing(url):
    assert tilelab.tuning_history(db=url).empty
    assert _sql(url, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'") == []


def test_hosts_opening_a_new_postgres_history_at_once_create_it_once(url):
    failures: list[BaseException] = []

    def open_store(host: int) -> None:
        try:
            TuningStore(url).write(KEY, f"run-of-host-{host}", TuneRow(0, {"block": 32}, TuneStatus.OK, latency_ms=1.0))
        except BaseException as exc:  # collected for the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=open_store, args=(host,)) for host in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert _sql(url, "SELECT COUNT(*) FROM tuning_rows") == [(4,)]
    assert _sql(url, "SELECT version FROM tilelab_format") == [(SCHEMA_VERSION,)]


def test_a_password_never_reaches_a_message():
    from tilelab.tune.store.connect import redacted

    assert redacted("postgresql://ann:pa%40ss@db.example:5432/tuning") == "postgresql://ann@db.example:5432/tuning"
    assert redacted("postgresql://db.example/tuning") == "postgresql://db.example/tuning"
