"""Tuning never lies or loses a row: what the run failed is measured again, the history is checked
before anything compiles, an interrupt keeps every compiled config, and bad `%tilelang tune` input
is one line. Real CPU-target sweeps throughout.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from python_child import finish, start_python
from tune_kernels import kernel_module

import tilelab
from tilelab.tune.store import SCHEMA_VERSION

TESTS = Path(__file__).parent

def _scale_add(db: Path, block, **kwargs):
    from tune_kernels import scale_add

    return tilelab.tune(scale_add, block=block, reference=lambda a, b: 2 * a + b, db=db, **kwargs)


def _statuses(result) -> dict:
    return {row.config["block"]: row.status.value for row in result.ordered_rows()}


def _remeasured(result) -> list:
    return sorted(row.config["block"] for row in result.ordered_rows() if not row.cached)


def _sql(db: Path, query: str, *params) -> list:
    with sqlite3.connect(db) as conn:
        return conn.execute(query, params).fetchall()


# -- what the run itself failed is measured again ---------------------------------------------------------
@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """One sweep of scale_add: a config that fails to lower, one that runs, one given a float."""
    db = tmp_path_factory.mktemp("trust") / "first.db"
    return db, _scale_add(db, tilelab.choices([0, 32, 64.5]), timeout=60)


@pytest.fixture
def history(first_run, tmp_path):
    """A copy of the first run's history, for a test to change."""
    db, result = first_run
    copy = tmp_path / "history.db"
    shutil.copy(db, copy)
    return copy, result


def test_a_float_given_for_an_int_parameter_names_the_parameter(first_run):
    _, result = first_run
    row = next(row for row in result.ordered_rows() if row.config["block"] == 64.5)

    assert row.status.value == "compile_error"
    assert row.error.startswith("block=64.5: expected an int")


def test_a_compile_error_stands_until_tilelang_changes(history):
    db, first = history
    again = _scale_add(db, tilelab.choices([0, 32]), timeout=60)
    assert _remeasured(again) == []  # the same TileLang: the error is the config's

    _sql(db, "UPDATE tuning_rows SET tilelang_version = '0.1.14'")  # as if measured under an older TileLang
    upgraded = _scale_add(db, tilelab.choices([0, 32]), timeout=60)

    assert _remeasured(upgraded) == [0]
    assert _statuses(upgraded) == {0: "compile_error", 32: "ok"}
    assert upgraded.rows[1].latency_ms == first.rows[1].latency_ms  # a success is never re-measured


def test_a_changed_kernel_source_is_measured_afresh(history, tmp_path):
    db, _ = history
    edited = kernel_module(tmp_path, "trust_edited_kernel", "scale_add", body="pass  # edited")

    result = tilelab.tune(edited, block=tilelab.choices([0]), db=db)

    assert _remeasured(result) == [0] and _statuses(result) == {0: "compile_error"}


def test_a_crashed_worker_is_measured_again_on_the_next_run(tmp_path):
    crash_once = "if block == 48 and not (HERE / 'crashed').exists():\n        (HERE / 'crashed').touch()\n        os._exit(3)"
    kernel = kernel_module(tmp_path, "trust_crash_kernel", "crash_once", body=crash_once)
    db = tmp_path / "crash.db"

    first = tilelab.tune(kernel, block=tilelab.choices([32, 48]), db=db)
    second = tilelab.tune(kernel, block=tilelab.choices([32, 48]), db=db)

    assert _statuses(first) == {32: "ok", 48: "crashed"}
    assert "exit code 3" in first.rows[1].error
    assert _remeasured(second) == [48] and _statuses(second) == {32: "ok", 48: "ok"}


def test_a_timeout_is_tried_again_only_under_a_longer_limit(tmp_path):
    db, hang = tmp_path / "timeout.db", tilelab.choices([96])  # tune_kernels.HANG_BLOCK

    _scale_add(db, hang, timeout=1)
    same = _scale_add(db, hang, timeout=1)
    shorter = _scale_add(db, hang, timeout=0.5)
    longer = _scale_add(db, hang, timeout=2)

    assert _remeasured(same) == [] and _remeasured(shorter) == []
    assert _remeasured(longer) == [96]
    assert longer.rows[0].status.value == "timeout" and "within 2 s" in longer.rows[0].error


# -- the history is checked before anything compiles ----------------------------------------------------
@pytest.fixture(scope="module")
def marked(tmp_path_factory):
    """A kernel that leaves a file behind when it is elaborated, i.e. when anything compiles."""
    directory = tmp_path_factory.mktemp("marked")
    kernel = kernel_module(directory, "trust_marked_kernel", "marked", body="(HERE / 'elaborated').touch()")
    return kernel, directory / "elaborated"


def _foreign(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")


def _newer(path: Path) -> None:
    from tilelab.tune.store import TuningStore

    TuningStore(path)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda path: path.write_bytes(os.urandom(4096)), "not an SQLite database"),
        (lambda path: path.write_text("block_M,latency_ms\n64,0.1\n"), "not an SQLite database"),
        (lambda path: path.mkdir(), "is a directory"),
        (_foreign, "another program's SQLite database"),
        (_newer, "format 99, newer than this TileLab reads"),
    ],
    ids=["random-bytes", "text-file", "directory", "another-programs-database", "newer-format"],
)
def test_an_unusable_history_fails_before_anything_compiles(marked, tmp_path, make, says):
    kernel, elaborated = marked
    elaborated.unlink(missing_ok=True)
    db = tmp_path / "history.db"
    make(db)

    with pytest.raises(ValueError, match=says) as error:
        tilelab.tune(kernel, block=tilelab.choices([32, 64]), db=db)

    message = str(error.value)
    assert str(db) in message and "db=':memory:'" in message and "\n" not in message
    assert not elaborated.exists()


def _unprivileged() -> list[str]:
    """A command prefix under which file permissions hold, even for root."""
    if os.geteuid() != 0:
        return []
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    # util-linux's setpriv is on every Debian machine: as root (CI, these machines) the test still runs.
    assert shutil.which("setpriv") and subprocess.run([*prefix, "true"], capture_output=True).returncode == 0
    return prefix


def test_a_read_only_history_fails_before_anything_compiles(marked, tmp_path):
    from tilelab.tune.store import TuningStore

    _, elaborated = marked
    elaborated.unlink(missing_ok=True)
    db = tmp_path / "read-only.db"
    TuningStore(db)
    db.chmod(0o444)
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(elaborated.parent)!r})
        import tilelab
        from trust_marked_kernel import marked
        try:
            tilelab.tune(marked, block=tilelab.choices([32, 64]), db={str(db)!r})
        except ValueError as exc:
            print("refused:", exc)
    """)
    done = subprocess.run([*_unprivileged(), sys.executable, "-c", script], capture_output=True, text=True, timeout=120)

    assert f"refused: the tuning history {db} is read-only" in done.stdout, done.stdout + done.stderr
    assert not elaborated.exists()
    assert tilelab.tuning_history(db=db).empty  # still readable


def test_a_history_of_the_first_format_is_migrated_and_its_rows_used(history):
    db, first = history
    with sqlite3.connect(db) as conn:  # back to format 1: no version, no timeout column, no run index
        if "timeout_s" in {column[1] for column in conn.execute("PRAGMA table_info(tuning_rows)")}:
            conn.execute("ALTER TABLE tuning_rows DROP COLUMN timeout_s")
        conn.execute("DROP INDEX IF EXISTS tuning_rows_run")
        conn.execute("PRAGMA application_id = 0")
        conn.execute("PRAGMA user_version = 0")
        conn.execute("UPDATE tuning_rows SET status = 'timeout', error = 'compile did not finish within 60 s;"
                     " the worker was killed' WHERE config LIKE '%64.5%'")  # fmt: skip

    assert len(tilelab.tuning_history(db=db)) == 3  # readable as it is
    again = _scale_add(db, tilelab.choices([0, 32, 64.5]), timeout=60)

    assert _remeasured(again) == []  # its timeout stands: the migration read the limit from the message
    assert again.rows[1].latency_ms == first.rows[1].latency_ms
    assert _sql(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert _sql(db, "SELECT timeout_s FROM tuning_rows WHERE status = 'timeout'") == [(60.0,)]


def test_a_history_of_the_second_format_gains_the_new_columns_and_keeps_its_rows(history):
    from tilelab.tune.store.schema import ADDED_IN_3, ADDED_IN_4

    db, first = history
    with sqlite3.connect(db) as conn:  # back to format 2: no spread, re-benchmark, machine-code, search or roofline columns
        for name, _ in (*ADDED_IN_3, *ADDED_IN_4):
            conn.execute(f"ALTER TABLE tuning_rows DROP COLUMN {name}")
        conn.execute("PRAGMA user_version = 2")

    assert len(tilelab.tuning_history(db=db)) == 3  # readable as it is
    again = _scale_add(db, tilelab.choices([0, 32, 64.5, 128]), timeout=60)

    assert _remeasured(again) == [128]  # the format-2 rows still answer for their configs
    assert again.rows[1].latency_ms == first.rows[1].latency_ms and again.rows[1].repetitions is None
    assert again.rows[3].repetitions >= 1 and again.rows[3].chosen_by == "grid"
    assert _sql(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    columns = {column[1] for column in _sql(db, "PRAGMA table_info(tuning_rows)")}
    assert {name for name, _ in ADDED_IN_3} <= columns
    assert _sql(db, "SELECT repetitions FROM tuning_rows WHERE json_extract(config, '$.block') = 128") == [(again.rows[3].repetitions,)]


def test_a_history_of_the_third_format_gains_the_roofline_column_and_keeps_its_rows(history):
    db, first = history
    with sqlite3.connect(db) as conn:  # back to format 3: no roofline_ms
        conn.execute("ALTER TABLE tuning_rows DROP COLUMN roofline_ms")
        conn.execute("PRAGMA user_version = 3")

    again = _scale_add(db, tilelab.choices([0, 32, 64.5]), timeout=60)

    assert _remeasured(again) == [] and again.rows[1].latency_ms == first.rows[1].latency_ms
    assert _sql(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert "roofline_ms" in {column[1] for column in _sql(db, "PRAGMA table_info(tuning_rows)")}


def test_an_unusable_default_history_falls_back_to_memory_with_a_warning(tmp_path, monkeypatch):
    from tilelab.tune.store import open_history

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("TILELAB_DB", raising=False)
    (tmp_path / ".tilelab").mkdir()
    (tmp_path / ".tilelab" / "tilelab.db").write_text("not a database")

    with pytest.warns(RuntimeWarning, match="not an SQLite database.*kept in memory only"):
        store = open_history(None)

    assert store.in_memory


def test_a_history_that_breaks_mid_run_warns_and_the_result_keeps_every_row(tmp_path):
    db = tmp_path / "breaks.db"

    def break_history(row):
        for stale in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            stale.unlink(missing_ok=True)
        db.write_text("overwritten by someone else")

    with pytest.warns(RuntimeWarning, match=f"cannot save a tuning row to {db}"):
        result = _scale_add(db, tilelab.choices([0, 32]), timeout=60, on_row=break_history)

    assert _statuses(result) == {0: "compile_error", 32: "ok"}


# -- an interrupt keeps every compiled config ---------------------------------------------------------------
def _start(body: str) -> subprocess.Popen:
    """A sweep in a new Python process, which prints its result's statuses when it returns."""
    script = "\n".join([
        "import sys, time",
        f"sys.path.insert(0, {str(TESTS)!r})",
        "import tilelab",
        "from tune_kernels import scale_add",
        textwrap.dedent(body).strip(),
        'print("partial", result.partial, sorted(row.status.value for row in result.rows.values()), flush=True)',
    ])  # fmt: skip
    return start_python(script)


def _stored(db: Path) -> list[tuple]:
    """The rows as a new connection reads them."""
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return sorted(conn.execute("SELECT json_extract(config, '$.block'), status, latency_ms FROM tuning_rows"))


def _wait_for_compiled(db: Path, count: int, limit_s: float = 90.0) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            if _sql(db, "SELECT COUNT(*) FROM tuning_rows WHERE status = 'compiled'") == [(count,)]:
                return
        except sqlite3.OperationalError:  # not created yet
            pass
        time.sleep(0.2)


def test_sigint_while_compiling_keeps_the_compiled_configs_and_the_next_run_measures_them(tmp_path):
    db = tmp_path / "sigint-compile.db"
    proc = _start(f"result = tilelab.tune(scale_add, block=tilelab.choices([32, 64, 96]), timeout=600, db={str(db)!r})")
    _wait_for_compiled(db, 2)  # 96 hangs: the sweep never leaves its compile phase
    proc.send_signal(signal.SIGINT)
    out = finish(proc, timeout_s=60)

    assert out.strip() == "partial True ['compiled', 'compiled']"
    assert _stored(db) == [(32, "compiled", None), (64, "compiled", None)]

    again = _scale_add(db, tilelab.choices([32, 64]))

    assert _remeasured(again) == [32, 64] and set(_statuses(again).values()) == {"ok"}


def test_sigint_while_benchmarking_keeps_the_configs_not_yet_timed(tmp_path):
    db = tmp_path / "sigint-bench.db"
    proc = _start(f"""
        calls = []
        def reference(a, b):
            calls.append(1)
            if len(calls) == 2:
                print("benchmarking", flush=True)
                time.sleep(600)
            return 2 * a + b
        result = tilelab.tune(scale_add, block=tilelab.choices([32, 64, 128]), reference=reference, db={str(db)!r})
    """)
    assert proc.stdout.readline().strip() == "benchmarking"  # the second of three benchmarks, stuck
    proc.send_signal(signal.SIGINT)
    out = finish(proc, timeout_s=60)

    assert out.strip() == "partial True ['compiled', 'compiled', 'ok']"
    stored = _stored(db)
    assert sorted(status for _, status, _ in stored) == ["compiled", "compiled", "ok"]
    assert all((latency is None) == (status == "compiled") for _, status, latency in stored)


# -- `%tilelang tune` input errors are one line ------------------------------------------------------------
@pytest.fixture
def session(ip):
    from tune_kernels import gemm, scale_add

    ip.user_ns.update(scale_add=scale_add, gemm=gemm, not_a_kernel=2048)
    return ip


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("tune scale_add block='64", "unbalanced quote in \"block='64\""),
        ("tune scale_add block=32,64 where='blok > 0'", "'blok' is not a swept parameter"),
        ("tune scale_add block=32,64 where='block // 0'", "ZeroDivisionError"),
        ("tune scale_add block=32 %%%", "'%%%'"),
        ("tune scale_add block=32 --nonsense 1", "'--nonsense' is not an option"),
        ("tune scale_add block=32 timeout=-5", "timeout=-5: expected a positive number"),
        ("tune nosuch block=32", "no kernel named 'nosuch'"),
        ("tune not_a_kernel block=32", "needs a @tilelang.jit function.*got int"),
    ],
    ids=["unbalanced-quote", "where-unknown-name", "where-fails", "garbage", "unknown-option", "bad-timeout",
         "unknown-kernel", "not-a-kernel"],
)  # fmt: skip
def test_bad_tune_lines_are_one_usage_error_line(session, line, says):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match=says) as error:
        session.run_line_magic("tilelang", line)

    assert "\n" not in str(error.value)


def test_tune_line_takes_options_as_flags_with_quoted_values(session, tmp_path):
    db = tmp_path / "flags.db"

    result = session.run_line_magic("tilelang", f"tune gemm M=128 N=128 K=128 block_M=64,128 --arch 'sm_80' --db='{db}'")

    assert result.choice.arch == "sm_80" and result.device == "none (lowered for sm_80)"
    assert _statuses_of(result, "block_M") == {64: "ok", 128: "ok"}
    assert len(tilelab.tuning_history(db=db)) == 2


def _statuses_of(result, name: str) -> dict:
    return {row.config[name]: row.status.value for row in result.ordered_rows()}
