"""The store: rows written as they come, read back by key, by nearby shape, or as a DataFrame."""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, insert, null, select, update
from sqlalchemy.exc import DBAPIError, OperationalError

from tilelab.tune.build import kernel_source
from tilelab.tune.result import TuneRow, TuneStatus, best_rank
from tilelab.tune.space import config_key
from tilelab.tune.store.connect import is_postgres_url, memory_engine, postgres_engine, redacted, sqlite_engine
from tilelab.tune.store.migrate import prepare
from tilelab.tune.store.rows import RunKey, StoredRow, signature_numbers
from tilelab.tune.store.schema import ROW_FIELDS, WAY_OUT, TuningHistoryError, tuning_rows

__all__ = ["TuningStore", "default_db_path", "open_history", "tuning_history"]

_KEY = ("kernel_hash", "signature", "target", "device")  # what rows must share to answer for a config (not the name)


def default_db_path() -> Path:
    """``$TILELAB_DB``, else ``~/.tilelab/tilelab.db``."""
    return Path(os.environ.get("TILELAB_DB") or Path.home() / ".tilelab" / "tilelab.db").expanduser()


class TuningStore:
    """The history, in an SQLite file, in memory, or in a PostgreSQL database (one table definition for all).

    ``path`` is a file, ``":memory:"`` or a ``postgresql://`` URL; None is ``$TILELAB_DB``,
    else ``~/.tilelab/tilelab.db``. An SQLite file gets one connection per call, so forked or
    spawned processes never share one. ``read_only`` stores (for :func:`tuning_history`) write
    nothing: they neither create, migrate nor need write access; a missing history reads as empty.

    Raises
    ------
    TuningHistoryError
        When the history cannot be used (see :mod:`tilelab.tune.store`); nothing has compiled yet.
    tilelab._extras.MissingExtraError
        For a PostgreSQL URL without psycopg (``pip install 'tilelab[cluster]'``).
    """

    def __init__(self, path: str | os.PathLike | None = None, *, read_only: bool = False) -> None:
        named = path if path is not None else os.environ.get("TILELAB_DB")
        self.read_only = read_only
        self._lock = threading.RLock()  # an in-memory history is one connection: threads take turns
        memory = named is not None and str(named) == ":memory:"
        if is_postgres_url(named):
            self.url, self.path = named, redacted(named)  # the path is what messages name
            self._engine = postgres_engine(named)
        else:
            self.path = Path(":memory:") if memory else Path(named or default_db_path()).expanduser()
            memory = memory or (read_only and not self.path.exists())
            self._engine = memory_engine() if memory else sqlite_engine(self.path, read_only)
        self._memory = memory
        with self._transaction() as conn:
            self._columns = prepare(conn, str(self.path), read_only and not memory)  # empty: no history yet

    @property
    def in_memory(self) -> bool:
        return self._memory

    def close(self) -> None:
        """Close the pooled connections (a later call opens another; an in-memory history is gone)."""
        self._engine.dispose()

    def _unusable(self, exc: DBAPIError) -> TuningHistoryError:
        said = _first_line(exc)
        if isinstance(exc, OperationalError) and "readonly" in said:
            return TuningHistoryError(f"the tuning history {self.path} is read-only: make it writable, or {WAY_OUT}")
        return TuningHistoryError(f"the tuning history {self.path} cannot be used ({said}): {WAY_OUT}")

    @contextlib.contextmanager
    def _transaction(self, saving: bool = False) -> Iterator[Connection]:
        """One transaction, committed when the block ends; a database error becomes a :class:`TuningHistoryError`."""
        try:
            with self._lock, self._engine.begin() as conn:
                yield conn
        except DBAPIError as exc:
            if saving:
                raise TuningHistoryError(f"cannot save a tuning row to {self.path} ({_first_line(exc)})") from None
            raise self._unusable(exc) from None

    def _column(self, name: str) -> Any:
        """The column ``name``, or NULL in its place where a read-only history of an older format lacks it."""
        return tuning_rows.c[name] if name in self._columns else null().label(name)

    def write(self, key: RunKey, run_id: str, row: TuneRow, tilelang_version: str = "", timeout_s: float | None = None) -> None:
        """Store one row in its own transaction; a later row of the same run and config replaces it.

        Raises
        ------
        TuningHistoryError
            When the history can no longer be written.
        """
        ckey, rows = config_key(row.config), tuning_rows.c
        values = {name: getattr(row, name) for name in ROW_FIELDS[1:]}
        if row.launchable is not None:
            values["launchable"] = int(row.launchable)  # an INTEGER column: PostgreSQL takes no bool there
        values.update(created=time.time(), status=row.status.value, tilelang_version=tilelang_version, timeout_s=timeout_s)
        with self._transaction(saving=True) as conn:
            same = (rows.run_id == run_id) & (rows.config_key == ckey)
            if conn.execute(update(tuning_rows).where(same).values(values)).rowcount == 0:
                config = json.dumps(row.config, default=repr)
                conn.execute(insert(tuning_rows).values(run_id=run_id, config_key=ckey, config=config, **asdict(key), **values))

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
        if not self._columns:
            return {}
        names = ("config_key", "config", "tilelang_version", "timeout_s", *ROW_FIELDS)
        query = select(*map(self._column, names)).where(*(tuning_rows.c[name] == getattr(key, name) for name in _KEY))
        with self._transaction() as conn:
            found = conn.execute(query.order_by(tuning_rows.c.id)).mappings().all()
        rows = {}
        for stored in found:
            fields = {name: stored[name] for name in ROW_FIELDS[2:]}
            fields["launchable"] = None if fields["launchable"] is None else bool(fields["launchable"])
            status = TuneStatus(stored["status"])
            row = TuneRow(-1, json.loads(stored["config"]), status, stored["error"], device=key.device, cached=True, **fields)
            rows[stored["config_key"]] = StoredRow(row, stored["tilelang_version"] or "", stored["timeout_s"])
        return rows

    def nearby(self, key: RunKey, limit: int = 4) -> list[dict[str, Any]]:
        """The best configs measured for other shapes of the same kernel, target and device: nearest shape first.

        Shapes are compared by their numbers (tensor dimensions and numeric
        arguments, on a log scale); only signatures of the same form (the same
        arguments, dtypes and keys) count. Each nearby shape gives its best config
        by the rule of :attr:`TuneResult.best` (:func:`~tilelab.tune.result.best_rank`).
        """
        if not self._columns:
            return []
        rows = tuning_rows.c
        query = select(rows.signature, rows.config, rows.latency_ms, self._column("rebench_ms")).where(
            rows.kernel_hash == key.kernel_hash, rows.target == key.target, rows.device == key.device,
            rows.signature != key.signature, rows.status == TuneStatus.OK.value, rows.latency_ms.is_not(None),
        )  # fmt: skip
        with self._transaction() as conn:
            found = conn.execute(query).all()
        form, numbers = signature_numbers(key.signature)
        best: dict[str, tuple[tuple[bool, float], str]] = {}
        for signature, config, latency, rebench in found:
            rank = best_rank(latency, rebench)
            if signature not in best or rank < best[signature][0]:
                best[signature] = (rank, config)
        ranked = []
        for signature, (rank, config) in best.items():
            other_form, other = signature_numbers(signature)
            if other_form == form and len(other) == len(numbers):
                distance = sum(abs(math.log(max(a, 1e-9) / max(b, 1e-9))) for a, b in zip(numbers, other, strict=True))
                ranked.append((distance, rank, config))
        ranked.sort(key=lambda item: item[:2])
        return [json.loads(config) for _, _, config in ranked[:limit]]

    def frame(self, kernel_hash: str | None = None, kernel_name: str | None = None):
        """Past rows as a DataFrame, newest last, with one column per config parameter."""
        import pandas as pd  # heavy: only when a frame is asked for

        names = [column.name for column in tuning_rows.columns if not self._columns or column.name in self._columns]
        found: list[tuple] = []
        if self._columns:
            query = select(*(tuning_rows.c[name] for name in names)).order_by(tuning_rows.c.id)
            if kernel_hash is not None:
                query = query.where(tuning_rows.c.kernel_hash == kernel_hash)
            elif kernel_name is not None:
                query = query.where(tuning_rows.c.kernel_name == kernel_name)
            with self._transaction() as conn:
                found = [tuple(row) for row in conn.execute(query)]
        frame = pd.DataFrame.from_records(found, columns=names, coerce_float=True)
        configs = pd.DataFrame.from_records([json.loads(text) for text in frame["config"]], index=frame.index)
        frame["created"] = pd.to_datetime(frame["created"], unit="s")
        return pd.concat([frame.drop(columns=["config_key"]), configs], axis=1)


def _first_line(exc: DBAPIError) -> str:
    """What the database driver said, first line only (psycopg adds hints on more lines)."""
    said = str(exc.orig).strip()
    return said.splitlines()[0] if said else type(exc.orig).__name__


def open_history(db: str | os.PathLike | None) -> TuningStore:
    """The store for ``tune(db=...)``.

    A file or PostgreSQL URL the caller named (``db=`` or ``$TILELAB_DB``) must be
    usable, or :class:`TuningHistoryError` is raised. The default file, which the
    caller may not know of, falls back to memory with a warning instead.
    """
    if db is not None or os.environ.get("TILELAB_DB"):
        return TuningStore(db)
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
        When the history is not a TileLab history this version can read.
    """
    store = TuningStore(db, read_only=True)
    if kernel is None:
        return store.frame()
    if isinstance(kernel, str):
        return store.frame(kernel_name=kernel)
    return store.frame(kernel_hash=RunKey.of("", kernel_source(kernel), "", "", "").kernel_hash)
