"""Opening a history: refuse another program's table or a newer format, then create ours or migrate it in place.

SQLite keeps the format in ``PRAGMA user_version`` and marks the file as TileLab's with
``PRAGMA application_id``; PostgreSQL keeps it in the one-row table ``tilelab_format``.
The check, the DDL and the new format commit in one transaction that holds the write
lock from its start (SQLite's ``BEGIN IMMEDIATE``, a PostgreSQL advisory lock), so
processes or hosts opening one history at once create or migrate it once.

Migration is by inspection: the columns of :data:`~tilelab.tune.store.schema.tuning_rows`
that the table lacks are added, empty for the rows it has. Format 1 also wrote a time limit
and a dead worker in words only; they are read back into their columns.
"""

from __future__ import annotations

import re

from sqlalchemy import Connection, delete, func, insert, inspect, select, text, update

from tilelab.tune.store.schema import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    WAY_OUT,
    TuningHistoryError,
    tilelab_format,
    tuning_rows,
)

__all__ = ["prepare"]


def prepare(conn: Connection, where: str, read_only: bool) -> set[str]:
    """The columns ``tuning_rows`` has, once ``conn``'s history is checked and (unless ``read_only``) created or migrated.

    A read-only open writes nothing: an older format is read as it is, and a database
    without the table gives no columns. The caller commits.

    Raises
    ------
    TuningHistoryError
        When the database holds another program's tables or a newer format; ``where`` names it.
    """
    postgres = conn.dialect.name == "postgresql"
    if postgres:
        conn.execute(select(func.pg_advisory_xact_lock(APPLICATION_ID)))
    elif not read_only:
        conn.exec_driver_sql("BEGIN IMMEDIATE")  # the driver begins none before DDL: take the write lock now
    tables = set(inspect(conn).get_table_names())
    version = _postgres_format(conn, where, tables) if postgres else _sqlite_format(conn, where, tables)
    if version > SCHEMA_VERSION:
        raise TuningHistoryError(
            f"the tuning history {where} has format {version}, newer than this TileLab reads ({SCHEMA_VERSION}):"
            f" upgrade tilelab, or {WAY_OUT}"
        )
    if read_only:
        return _columns(conn) if tuning_rows.name in tables else set()
    if tuning_rows.name not in tables:
        tuning_rows.create(conn)
    elif version < SCHEMA_VERSION:
        _migrate(conn, version)
    for index in tuning_rows.indexes:  # format 1 had no run index
        index.create(conn, checkfirst=True)
    if postgres:
        tilelab_format.create(conn, checkfirst=True)
        conn.execute(delete(tilelab_format))
        conn.execute(insert(tilelab_format).values(version=SCHEMA_VERSION))
    else:
        conn.exec_driver_sql(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.exec_driver_sql(f"PRAGMA user_version = {SCHEMA_VERSION}")  # writes even when unchanged: the writable check
    return {column.name for column in tuning_rows.columns}


def _sqlite_format(conn: Connection, where: str, tables: set[str]) -> int:
    """The file's format; another program's file (its mark, or tables beside an unmarked one) is refused."""
    application = conn.exec_driver_sql("PRAGMA application_id").scalar_one()
    if application not in (0, APPLICATION_ID) or (application == 0 and tables - {tuning_rows.name}):
        raise TuningHistoryError(f"the tuning history {where} is another program's SQLite database, not TileLab's: {WAY_OUT}")
    return conn.exec_driver_sql("PRAGMA user_version").scalar_one()


def _postgres_format(conn: Connection, where: str, tables: set[str]) -> int:
    """The database's format (0: no history yet); a ``tuning_rows`` without our format table is refused."""
    if tilelab_format.name not in tables:
        if tuning_rows.name in tables:
            raise TuningHistoryError(f"the tuning history {where} has a tuning_rows table that is not TileLab's: {WAY_OUT}")
        return 0
    return conn.execute(select(tilelab_format.c.version)).scalar() or 0


def _columns(conn: Connection) -> set[str]:
    return {column["name"] for column in inspect(conn).get_columns(tuning_rows.name)}


def _migrate(conn: Connection, version: int) -> None:
    """Bring a history of format ``version`` to :data:`SCHEMA_VERSION`: the columns it lacks, added in their order."""
    present = _columns(conn)
    for column in tuning_rows.columns:
        if column.name not in present:
            kind = column.type.compile(dialect=conn.dialect)
            conn.execute(text(f"ALTER TABLE {tuning_rows.name} ADD COLUMN {column.name} {kind}"))
    if version < 2:
        _migrate_from_1(conn)


def _migrate_from_1(conn: Connection) -> None:
    """Version 1 had no time limit column and called a dead compile worker a compile error."""
    rows = tuning_rows.c
    dead = (rows.status == "compile_error") & rows.error.like("compile worker died%")
    conn.execute(update(tuning_rows).where(dead).values(status="crashed"))
    for row_id, error in conn.execute(select(rows.id, rows.error).where(rows.status == "timeout")).all():
        limit = re.search(r"within ([0-9.e+-]+) s", error or "")
        if limit:
            conn.execute(update(tuning_rows).where(rows.id == row_id).values(timeout_s=float(limit.group(1))))
