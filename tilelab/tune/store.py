"""The tuning history: every finished row in SQLite, as soon as it finishes.

Rows are keyed by the kernel's source hash, its argument signature, the target
and the device, so a re-run of the same sweep can skip what was measured. The
database (default ``~/.tilelab/tilelab.db``; ``TILELAB_DB`` or ``db=``
elsewhere) runs in WAL mode with one transaction per row: a kernel that dies
mid-sweep loses at most the row it was writing and never corrupts the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilelab.tune.result import TuneRow, TuneStatus
from tilelab.tune.space import config_key

__all__ = ["RunKey", "TuningStore", "default_db_path", "signature_of", "tuning_history"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tuning_rows (
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
    tilelang_version TEXT
);
CREATE INDEX IF NOT EXISTS tuning_rows_key ON tuning_rows (kernel_hash, signature, target, device, config_key);
"""
_ROW_FIELDS = ("status", "error", "latency_ms", "tflops", "gbps", "compile_s", "bench_s")


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


class TuningStore:
    """The SQLite history; one connection per call, so forked or spawned processes never share one."""

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.executescript(_SCHEMA)

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=30.0)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            yield conn
        finally:
            conn.close()

    def write(self, key: RunKey, run_id: str, row: TuneRow, tilelang_version: str = "") -> None:
        """Append one row in its own transaction."""
        values = (
            run_id, time.time(), key.kernel_name, key.kernel_hash, key.signature, key.target, key.device,
            config_key(row.config), json.dumps(row.config, default=repr), row.status.value, row.error,
            row.latency_ms, row.tflops, row.gbps, row.compile_s, row.bench_s, tilelang_version,
        )  # fmt: skip
        with self._connect() as conn, conn:
            conn.execute(
                "INSERT INTO tuning_rows (run_id, created, kernel_name, kernel_hash, signature, target, device,"
                " config_key, config, status, error, latency_ms, tflops, gbps, compile_s, bench_s, tilelang_version)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )

    def measured(self, key: RunKey) -> dict[str, TuneRow]:
        """The newest row of every config measured under ``key``, by config key."""
        query = (
            "SELECT config_key, config, " + ", ".join(_ROW_FIELDS) + " FROM tuning_rows"
            " WHERE kernel_hash = ? AND signature = ? AND target = ? AND device = ? ORDER BY id"
        )
        with self._connect() as conn:
            found = conn.execute(query, (key.kernel_hash, key.signature, key.target, key.device)).fetchall()
        rows = {}
        for ckey, config, status, error, *numbers in found:
            fields = dict(zip(_ROW_FIELDS[2:], numbers, strict=True))
            rows[ckey] = TuneRow(
                -1, json.loads(config), TuneStatus(status), error, device=key.device, cached=True, **fields
            )
        return rows

    def frame(self, kernel_hash: str | None = None, kernel_name: str | None = None):
        """Past rows as a DataFrame, newest last, with one column per config parameter."""
        import pandas as pd

        query, params = "SELECT * FROM tuning_rows", []
        if kernel_hash is not None:
            query, params = query + " WHERE kernel_hash = ?", [kernel_hash]
        elif kernel_name is not None:
            query, params = query + " WHERE kernel_name = ?", [kernel_name]
        with self._connect() as conn:
            frame = pd.read_sql_query(query + " ORDER BY id", conn, params=params)
        configs = pd.DataFrame.from_records([json.loads(text) for text in frame["config"]], index=frame.index)
        frame["created"] = pd.to_datetime(frame["created"], unit="s")
        return pd.concat([frame.drop(columns=["config_key"]), configs], axis=1)


def tuning_history(kernel: Any = None, db: str | os.PathLike | None = None):
    """Past tuning rows as a pandas DataFrame.

    Parameters
    ----------
    kernel
        A kernel (its rows, by source hash), a kernel name, or None for all rows.
    db
        The database file (default ``$TILELAB_DB`` or ``~/.tilelab/tilelab.db``).
    """
    store = TuningStore(db)
    if kernel is None:
        return store.frame()
    if isinstance(kernel, str):
        return store.frame(kernel_name=kernel)
    from tilelab.tune.build import kernel_source

    return store.frame(kernel_hash=RunKey.of("", kernel_source(kernel), "", "", "").kernel_hash)
