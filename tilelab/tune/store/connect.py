"""Where a tuning history lives, as a SQLAlchemy engine: an SQLite file, memory, or a PostgreSQL URL.

An SQLite file is looked at before SQLite opens it, so a directory or a file that is
not SQLite is refused in words. Each use of a file opens its own connection (forked
or spawned processes never share one) in WAL mode. PostgreSQL goes through psycopg 3
(the ``cluster`` extra); a password in its URL never reaches a message (:func:`redacted`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy import Engine, NullPool, StaticPool, create_engine, make_url
from sqlalchemy.exc import ArgumentError

from tilelab._extras import require
from tilelab.tune.store.schema import WAY_OUT, TuningHistoryError

__all__ = ["is_postgres_url", "memory_engine", "postgres_engine", "redacted", "sqlite_engine"]

_SQLITE_HEADER = b"SQLite format 3\x00"
_BUSY_S = 30.0  # how long a write waits for another process's transaction on the same file
_CONNECT_S = 10  # an unreachable server is one line after this long, not a hang


def is_postgres_url(db: Any) -> bool:
    """Whether ``db`` names a PostgreSQL database rather than an SQLite file."""
    return isinstance(db, str) and db.startswith(("postgresql://", "postgres://"))


def redacted(url: str) -> str:
    """``url`` without its password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}@{host}" if parts.username else host))


def postgres_engine(url: str) -> Engine:
    """An engine on ``url`` through psycopg 3; nothing connects yet.

    Raises
    ------
    tilelab._extras.MissingExtraError
        When psycopg is not installed (``pip install 'tilelab[cluster]'``).
    TuningHistoryError
        When SQLAlchemy cannot read ``url``.
    """
    require("psycopg", "a PostgreSQL tuning history")
    try:
        target = make_url(url).set(drivername="postgresql+psycopg")
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise TuningHistoryError(f"the tuning history {redacted(url)} is not a PostgreSQL URL: {WAY_OUT}") from None
    return create_engine(target, connect_args={"connect_timeout": _CONNECT_S})


def memory_engine() -> Engine:
    """An SQLite database in memory: one connection, shared by every thread (the store takes turns)."""
    return create_engine("sqlite://", creator=lambda: sqlite3.connect(":memory:", check_same_thread=False), poolclass=StaticPool)


def sqlite_engine(path: Path, read_only: bool) -> Engine:
    """An engine on the SQLite file ``path``, checked first; ``read_only`` opens it so (and never creates it).

    Raises
    ------
    TuningHistoryError
        When ``path`` is a directory, cannot be read or made, or is not an SQLite file.
    """
    _check_file(path, read_only)

    def connect() -> sqlite3.Connection:
        if read_only:
            return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=_BUSY_S)
        conn = sqlite3.connect(path, timeout=_BUSY_S)
        try:
            conn.execute("PRAGMA journal_mode=WAL")  # a process killed mid-row never corrupts the file
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    return create_engine("sqlite://", creator=connect, poolclass=NullPool)


def _check_file(path: Path, read_only: bool) -> None:
    """Refuse a directory or a file that is not SQLite; make the parent folder of a new file."""
    if path.is_dir():
        raise TuningHistoryError(f"the tuning history {path} is a directory: name a file in it, or {WAY_OUT}")
    header = b""
    try:
        if path.exists():
            with open(path, "rb") as existing:
                header = existing.read(len(_SQLITE_HEADER))
        elif not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TuningHistoryError(f"the tuning history {path} cannot be opened ({exc.strerror}): {WAY_OUT}") from None
    if header and header != _SQLITE_HEADER:
        raise TuningHistoryError(f"the tuning history {path} is not an SQLite database: move it away, or {WAY_OUT}")
