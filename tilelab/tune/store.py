"""The tuning history: every row in SQLite, as soon as it exists.

Rows are keyed by the kernel's source hash, its argument signature, the target
and the device, so a re-run of the same sweep can skip what was measured. The
database (default ``~/.tilelab/tilelab.db``; ``TILELAB_DB`` or ``db=``
elsewhere, a PostgreSQL URL too (:mod:`tilelab.tune.store_postgres`);
``":memory:"`` for none) runs in WAL mode with one transaction per
row: a kernel that dies mid-sweep loses at most the row it was writing and
never corrupts the file. A config that compiled is written at once (status
``compiled``) and its row is updated when its benchmark ends.

The file is checked when the store opens, before anything compiles: a
directory, a file that is not SQLite, another program's database, a newer
format or a file TileLab cannot write raises :class:`TuningHistoryError`.
The format is ``PRAGMA user_version`` (marked as TileLab's by
``PRAGMA application_id``); older formats are migrated in place, one step at a
time: version 1 (no version stored, no ``timeout_s`` column), version 2 (no
latency spread, re-benchmark, machine-code or search columns), version 3 (no
``roofline_ms``), version 4 (no provenance: who served each compile and
TileLang's cache key and its components, :data:`tilelab.provenance.PROVENANCE_COLUMNS`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import sqlite3
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilelab.provenance import PROVENANCE_COLUMNS
from tilelab.tune.result import TuneRow, TuneStatus, best_rank
from tilelab.tune.space import config_key

__all__ = [
    "SCHEMA_VERSION",
    "RunKey",
    "StoredRow",
    "TuningHistoryError",
    "TuningStore",
    "default_db_path",
    "open_history",
    "signature_of",
    "tuning_history",
]

SCHEMA_VERSION = 5
_APPLICATION_ID = 0x544C4142  # "TLAB"
_SQLITE_HEADER = b"SQLite format 3\x00"
_CREATE = """
CREATE TABLE tuning_rows (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    created REAL NOT NULL,
    kernel_name TEXT NOT NULL,
    kernel_hash TEXT NOT NULL,
    signature TEXT NOT NULL,
    target TEXT NOT NULL,
    device TEXT NOT NULL,
    config_key TEXT NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    latency_ms REAL,
    tflops REAL,
    gbps REAL,
    compile_s REAL,
    bench_s REAL,
    tilelang_version TEXT,
    timeout_s REAL,
    {added}
)"""
# Format 3: the spread over repetitions, the serial re-benchmark, machine-code columns and search facts.
_ADDED_IN_3 = (
    ("latency_min_ms", "REAL"),
    ("latency_median_ms", "REAL"),
    ("latency_p90_ms", "REAL"),
    ("latency_std_ms", "REAL"),
    ("repetitions", "INTEGER"),
    ("rebench_ms", "REAL"),
    ("registers", "INTEGER"),
    ("spills", "INTEGER"),
    ("shared_bytes", "INTEGER"),
    ("occupancy", "REAL"),
    ("launchable", "INTEGER"),
    ("trial", "INTEGER"),
    ("chosen_by", "TEXT"),
    ("elapsed_s", "REAL"),
)
# Format 4: the static roofline bound, so a config answered from the history keeps its roofline_pct.
_ADDED_IN_4 = (("roofline_ms", "REAL"),)
# Format 5: who served each compile (TileLang's memory or disk cache, or fresh), its key and the key's components.
_ADDED_IN_5 = tuple((name, "TEXT") for name in PROVENANCE_COLUMNS)
_CREATE = _CREATE.format(added=",\n    ".join(f"{name} {kind}" for name, kind in (*_ADDED_IN_3, *_ADDED_IN_4, *_ADDED_IN_5)))
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS tuning_rows_key ON tuning_rows (kernel_hash, signature, target, device, config_key)",
    "CREATE INDEX IF NOT EXISTS tuning_rows_run ON tuning_rows (run_id, config_key)",
)
_ROW_FIELDS = ("status", "error", "latency_ms", "tflops", "gbps", "compile_s", "bench_s",
               *(name for name, _ in (*_ADDED_IN_3, *_ADDED_IN_4, *_ADDED_IN_5)))  # fmt: skip
_WRITTEN = ("created", *_ROW_FIELDS, "tilelang_version", "timeout_s")
_CONFIG_FAILURES = (TuneStatus.COMPILE_ERROR, TuneStatus.CANNOT_LAUNCH, TuneStatus.RUN_ERROR, TuneStatus.MISMATCH)
_WAY_OUT = "pass db= another file, or db=':memory:' to keep this run's rows in memory only"


class TuningHistoryError(ValueError):
    """The history database cannot be used; the message names the file and the way out."""


def default_db_path() -> Path:
    """``$TILELAB_DB``, else ``~/.tilelab/tilelab.db``."""
    return Path(os.environ.get("TILELAB_DB") or Path.home() / ".tilelab" / "tilelab.db").expanduser()


def signature_of(args: tuple, fixed: dict[str, Any]) -> str:
    """A canonical text of the arguments every config shares (tensors by shape and dtype)."""

    def plain(value: Any) -> Any:
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        if shape is not None and dtype is not None:
            return f"Tensor[{', '.join(str(int(s)) for s in shape)}; {dtype}]"
        if isinstance(value, (bool, int, float, str)) or value is None:
            return value
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return repr(value)

    return json.dumps({"args": [plain(a) for a in args], "kwargs": {k: plain(v) for k, v in sorted(fixed.items())}})


@dataclass(frozen=True)
class RunKey:
    """What makes two measurements of the same config comparable."""

    kernel_name: str
    kernel_hash: str
    signature: str
    target: str
    device: str

    @classmethod
    def of(cls, name: str, source: str, signature: str, target: str, device: str) -> RunKey:
        return cls(name, hashlib.sha256(source.encode()).hexdigest()[:16], signature, target, device)


@dataclass(frozen=True)
class StoredRow:
    """A row of the history and what it was measured under."""

    row: TuneRow
    tilelang_version: str
    timeout_s: float | None

    def stands(self, tilelang_version: str, timeout: float) -> bool:
        """Whether this row still answers for its config, so that a new run need not measure it.

        A success stands. A failure of the config (compile or run error, mismatch) stands
        while TileLang is the same version (a changed kernel has another key). A timeout
        stands only under the same TileLang and no longer a time limit. A failure of the
        run itself (a crashed worker, a config compiled but never benchmarked) never stands.
        """
        status = self.row.status
        if status is TuneStatus.OK:
            return True
        if status in _CONFIG_FAILURES:
            return self.tilelang_version == tilelang_version
        if status is TuneStatus.TIMEOUT:
            same = self.tilelang_version == tilelang_version
            return same and self.timeout_s is not None and timeout <= self.timeout_s
        return False


class TuningStore:
    """The SQLite history; one connection per call, so forked or spawned processes never share one.

    ``read_only`` stores (for :func:`tuning_history`) write nothing: they neither create,
    migrate nor need write access; a missing file reads as an empty history.

    Raises
    ------
    TuningHistoryError
        When the file cannot be used (see the module's docstring); nothing has compiled yet.
    """

    _errors: tuple[type[BaseException], ...] = (sqlite3.Error,)  # what the database driver raises (PostgresStore: psycopg's)

    def __init__(self, path: str | os.PathLike | None = None, *, read_only: bool = False) -> None:
        memory = path is not None and str(path) == ":memory:"
        self.path = Path(":memory:") if memory else Path(path or default_db_path()).expanduser()
        self.read_only = read_only
        self._memory = None
        if memory or (read_only and not self.path.exists()):
            self._memory = sqlite3.connect(":memory:")
        else:
            self._check_file()
        try:
            with self._connect() as conn:
                self._prepare(conn)
        except sqlite3.DatabaseError as exc:
            raise self._unusable(exc) from None

    @property
    def in_memory(self) -> bool:
        return self._memory is not None

    def _unusable(self, exc: BaseException) -> TuningHistoryError:
        if isinstance(exc, sqlite3.OperationalError) and "readonly" in str(exc):
            return TuningHistoryError(f"the tuning history {self.path} is read-only: make it writable, or {_WAY_OUT}")
        return TuningHistoryError(f"the tuning history {self.path} cannot be used ({exc}): {_WAY_OUT}")

    def _check_file(self) -> None:
        if self.path.is_dir():
            raise TuningHistoryError(f"the tuning history {self.path} is a directory: name a file in it, or {_WAY_OUT}")
        header = b""
        try:
            if self.path.exists():
                with open(self.path, "rb") as existing:
                    header = existing.read(len(_SQLITE_HEADER))
            elif not self.read_only:
                self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TuningHistoryError(f"the tuning history {self.path} cannot be opened ({exc.strerror}): {_WAY_OUT}") from None
        if header and header != _SQLITE_HEADER:
            raise TuningHistoryError(f"the tuning history {self.path} is not an SQLite database: move it away, or {_WAY_OUT}")

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """Refuse foreign or newer files; create or migrate ours, proving on the way that the file is writable."""
        application = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        theirs = tables - {"tuning_rows", "sqlite_sequence"}
        if application not in (0, _APPLICATION_ID) or (application == 0 and theirs):
            raise TuningHistoryError(f"the tuning history {self.path} is another program's SQLite database, not TileLab's: {_WAY_OUT}")
        _refuse_newer(self.path, version)
        if self.read_only and not self.in_memory:
            return
        conn.isolation_level = None  # explicit transaction: the DDL and PRAGMAs below commit together
        try:
            conn.execute("BEGIN IMMEDIATE")
            create_or_migrate(conn, tables, version)
            conn.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")  # writes even when unchanged: the writable check
            conn.execute("COMMIT")
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.isolation_level = ""

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        if self._memory is not None:
            yield self._memory
            return
        if self.read_only:
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
        else:
            conn = sqlite3.connect(self.path, timeout=30.0)
        try:
            if not self.read_only:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            yield conn
        finally:
            conn.close()

    def write(self, key: RunKey, run_id: str, row: TuneRow, tilelang_version: str = "", timeout_s: float | None = None) -> None:
        """Store one row in its own transaction; a later row of the same run and config replaces it.

        Raises
        ------
        TuningHistoryError
            When the file can no longer be written.
        """
        ckey = config_key(row.config)
        fields = [getattr(row, name) for name in _ROW_FIELDS[1:]]
        values = (time.time(), row.status.value, *fields, tilelang_version, timeout_s)
        try:
            with self._connect() as conn, conn:
                updated = conn.execute(
                    f"UPDATE tuning_rows SET {', '.join(f'{name} = ?' for name in _WRITTEN)} WHERE run_id = ? AND config_key = ?",
                    (*values, run_id, ckey),
                )
                if updated.rowcount == 0:
                    conn.execute(
                        "INSERT INTO tuning_rows (run_id, kernel_name, kernel_hash, signature, target, device, config_key,"
                        f" config, {', '.join(_WRITTEN)}) VALUES ({', '.join('?' * (8 + len(_WRITTEN)))})",
                        (run_id, key.kernel_name, key.kernel_hash, key.signature, key.target, key.device, ckey,
                         json.dumps(row.config, default=repr), *values),
                    )  # fmt: skip
        except self._errors as exc:
            raise TuningHistoryError(f"cannot save a tuning row to {self.path} ({exc})") from None

    def saver(self, key: RunKey, run_id: str, tilelang_version: str, timeout_s: float) -> Callable[[TuneRow], None]:
        """``write`` for a sweep: the first failure warns, and the rest of the run stays in memory only."""
        failed: list[TuningHistoryError] = []

        def save(row: TuneRow) -> None:
            if failed:
                return
            try:
                self.write(key, run_id, row, tilelang_version, timeout_s)
            except TuningHistoryError as exc:
                failed.append(exc)
                warnings.warn(f"{exc}; the rest of this run is kept in its result only", RuntimeWarning, stacklevel=2)

        return save

    def measured(self, key: RunKey) -> dict[str, StoredRow]:
        """The newest row of every config measured under ``key``, by config key."""
        query = (
            "SELECT config_key, config, tilelang_version, timeout_s, " + ", ".join(_ROW_FIELDS) + " FROM tuning_rows"
            " WHERE kernel_hash = ? AND signature = ? AND target = ? AND device = ? ORDER BY id"
        )
        try:
            with self._connect() as conn:
                found = conn.execute(query, (key.kernel_hash, key.signature, key.target, key.device)).fetchall()
        except self._errors as exc:
            raise self._unusable(exc) from None
        rows = {}
        for ckey, config, version, timeout_s, status, error, *numbers in found:
            fields = dict(zip(_ROW_FIELDS[2:], numbers, strict=True))
            fields["launchable"] = None if fields["launchable"] is None else bool(fields["launchable"])
            row = TuneRow(-1, json.loads(config), TuneStatus(status), error, device=key.device, cached=True, **fields)
            rows[ckey] = StoredRow(row, version or "", timeout_s)
        return rows

    def nearby(self, key: RunKey, limit: int = 4) -> list[dict[str, Any]]:
        """The best configs measured for other shapes of the same kernel, target and device: nearest shape first.

        Shapes are compared by their numbers (tensor dimensions and numeric
        arguments, on a log scale); only signatures of the same form (the same
        arguments, dtypes and keys) count. Each nearby shape gives its best config
        by the rule of :attr:`TuneResult.best` (:func:`~tilelab.tune.result.best_rank`).
        """
        form, numbers = _signature_numbers(key.signature)
        query = (
            "SELECT signature, config, latency_ms, rebench_ms FROM tuning_rows WHERE kernel_hash = ? AND target = ?"
            " AND device = ? AND signature != ? AND status = 'ok' AND latency_ms IS NOT NULL"
        )
        try:
            with self._connect() as conn:
                found = conn.execute(query, (key.kernel_hash, key.target, key.device, key.signature)).fetchall()
        except self._errors as exc:
            raise self._unusable(exc) from None
        best: dict[str, tuple[tuple[bool, float], str]] = {}
        for signature, config, latency, rebench in found:
            rank = best_rank(latency, rebench)
            if signature not in best or rank < best[signature][0]:
                best[signature] = (rank, config)
        ranked = []
        for signature, (rank, config) in best.items():
            other_form, other = _signature_numbers(signature)
            if other_form == form and len(other) == len(numbers):
                distance = sum(abs(math.log(max(a, 1e-9) / max(b, 1e-9))) for a, b in zip(numbers, other, strict=True))
                ranked.append((distance, rank, config))
        ranked.sort(key=lambda item: item[:2])
        return [json.loads(config) for _, _, config in ranked[:limit]]

    def frame(self, kernel_hash: str | None = None, kernel_name: str | None = None):
        """Past rows as a DataFrame, newest last, with one column per config parameter."""
        import pandas as pd

        query, params = "SELECT * FROM tuning_rows", []
        if kernel_hash is not None:
            query, params = query + " WHERE kernel_hash = ?", [kernel_hash]
        elif kernel_name is not None:
            query, params = query + " WHERE kernel_name = ?", [kernel_name]
        with self._connect() as conn:
            cursor = conn.execute(query + " ORDER BY id", params)
            frame = pd.DataFrame.from_records(cursor.fetchall(), columns=[column[0] for column in cursor.description], coerce_float=True)
        configs = pd.DataFrame.from_records([json.loads(text) for text in frame["config"]], index=frame.index)
        frame["created"] = pd.to_datetime(frame["created"], unit="s")
        return pd.concat([frame.drop(columns=["config_key"]), configs], axis=1)


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def _signature_numbers(signature: str) -> tuple[str, list[float]]:
    """A signature's form (its text with every number replaced by ``#``) and its positive numbers, in order."""
    numbers = [float(text) for text in _NUMBER.findall(signature)]
    return _NUMBER.sub("#", signature), [abs(n) for n in numbers]


def _refuse_newer(path: Any, version: int) -> None:
    """A history of a newer format than this TileLab reads is refused, in one line."""
    if version > SCHEMA_VERSION:
        raise TuningHistoryError(
            f"the tuning history {path} has format {version}, newer than this TileLab reads ({SCHEMA_VERSION}):"
            f" upgrade tilelab, or {_WAY_OUT}"
        )


def create_or_migrate(conn: Any, tables: set[str], version: int) -> None:
    """``tuning_rows`` created when missing, else migrated from ``version``; its indexes made (SQLite or PostgreSQL)."""
    if "tuning_rows" not in tables:
        conn.execute(_CREATE)
    elif version < SCHEMA_VERSION:
        _migrate(conn, version)
    for index in _INDEXES:
        conn.execute(index)


def _migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring a file of format ``version`` to :data:`SCHEMA_VERSION`, one format at a time."""
    if version < 2:
        _migrate_from_1(conn)
    if version < 3:
        _add_columns(conn, _ADDED_IN_3)  # no spread, re-benchmark, machine-code or search columns: empty for its rows
    if version < 4:
        _add_columns(conn, _ADDED_IN_4)  # no roofline: empty for its rows
    if version < 5:
        _add_columns(conn, _ADDED_IN_5)  # no provenance: empty for its rows


def _add_columns(conn: sqlite3.Connection, columns: tuple[tuple[str, str], ...]) -> None:
    """The ``columns`` that ``tuning_rows`` lacks, added (empty for the rows it has)."""
    present = {column[1] for column in conn.execute("PRAGMA table_info(tuning_rows)")}
    for name, kind in columns:
        if name not in present:
            conn.execute(f"ALTER TABLE tuning_rows ADD COLUMN {name} {kind}")


def _migrate_from_1(conn: sqlite3.Connection) -> None:
    """Version 1 had no time limit column and called a dead compile worker a compile error."""
    conn.execute("ALTER TABLE tuning_rows ADD COLUMN timeout_s REAL")
    conn.execute("UPDATE tuning_rows SET status = 'crashed' WHERE status = 'compile_error' AND error LIKE 'compile worker died%'")
    for row_id, error in conn.execute("SELECT id, error FROM tuning_rows WHERE status = 'timeout'").fetchall():
        limit = re.search(r"within ([0-9.e+-]+) s", error or "")
        if limit:
            conn.execute("UPDATE tuning_rows SET timeout_s = ? WHERE id = ?", (float(limit.group(1)), row_id))


def _named_store(db: str | os.PathLike | None, read_only: bool = False) -> TuningStore:
    """The store ``db`` (else ``$TILELAB_DB``) names: a PostgreSQL URL, or an SQLite file."""
    from tilelab.tune.store_postgres import PostgresStore, is_postgres_url

    named = db if db is not None else os.environ.get("TILELAB_DB")
    if is_postgres_url(named):
        return PostgresStore(named, read_only=read_only)
    return TuningStore(db, read_only=read_only)


def open_history(db: str | os.PathLike | None) -> TuningStore:
    """The store for ``tune(db=...)``.

    A file or PostgreSQL URL the caller named (``db=`` or ``$TILELAB_DB``) must be
    usable, or :class:`TuningHistoryError` is raised. The default file, which the
    caller may not know of, falls back to memory with a warning instead.
    """
    if db is not None or os.environ.get("TILELAB_DB"):
        return _named_store(db)
    try:
        return TuningStore(None)
    except TuningHistoryError as exc:
        warnings.warn(f"{exc}; this run's rows are kept in memory only", RuntimeWarning, stacklevel=3)
        return TuningStore(":memory:")


def tuning_history(kernel: Any = None, db: str | os.PathLike | None = None):
    """Past tuning rows as a pandas DataFrame.

    Parameters
    ----------
    kernel
        A kernel (its rows, by source hash), a kernel name, or None for all rows.
    db
        The database file or PostgreSQL URL (default ``$TILELAB_DB`` or ``~/.tilelab/tilelab.db``).

    Raises
    ------
    TuningHistoryError
        When the file is not a TileLab history this version can read.
    """
    store = _named_store(db, read_only=True)
    if kernel is None:
        return store.frame()
    if isinstance(kernel, str):
        return store.frame(kernel_name=kernel)
    from tilelab.tune.build import kernel_source

    return store.frame(kernel_hash=RunKey.of("", kernel_source(kernel), "", "", "").kernel_hash)
