"""What a TileLab tuning history is: the ``tuning_rows`` table, one definition for SQLite and PostgreSQL.

Each format added columns at the end of the table (``ADDED_IN_2`` … ``ADDED_IN_6``),
so a history of any format gains what it lacks in place (:mod:`tilelab.tune.store.migrate`).
"""

from __future__ import annotations

from sqlalchemy import REAL, BigInteger, Column, Double, Identity, Index, Integer, MetaData, Table, Text

from tilelab.provenance import PROVENANCE_COLUMNS

__all__ = [
    "ADDED_IN_2",
    "ADDED_IN_3",
    "ADDED_IN_4",
    "ADDED_IN_5",
    "ADDED_IN_6",
    "APPLICATION_ID",
    "ROW_FIELDS",
    "SCHEMA_VERSION",
    "WAY_OUT",
    "WRITTEN",
    "TuningHistoryError",
    "tilelab_format",
    "tuning_rows",
]

SCHEMA_VERSION = 6
APPLICATION_ID = 0x544C4142  # "TLAB": SQLite's application_id of our files, PostgreSQL's advisory lock
WAY_OUT = "pass db= another file, or db=':memory:' to keep this run's rows in memory only"

_REAL = Double().with_variant(REAL(), "sqlite")  # DOUBLE PRECISION on PostgreSQL; REAL, as format 1 declared it, on SQLite
# Format 2: the time limit a run gave its configs, so a timeout stands only under no longer a limit.
ADDED_IN_2 = (("timeout_s", _REAL),)
# Format 3: the spread over repetitions, the serial re-benchmark, machine-code columns and search facts.
ADDED_IN_3 = (
    ("latency_min_ms", _REAL),
    ("latency_median_ms", _REAL),
    ("latency_p90_ms", _REAL),
    ("latency_std_ms", _REAL),
    ("repetitions", Integer),
    ("rebench_ms", _REAL),
    ("registers", Integer),
    ("spills", Integer),
    ("shared_bytes", Integer),
    ("occupancy", _REAL),
    ("launchable", Integer),
    ("trial", Integer),
    ("chosen_by", Text),
    ("elapsed_s", _REAL),
)
# Format 4: the static roofline bound, so a config answered from the history keeps its roofline_pct.
ADDED_IN_4 = (("roofline_ms", _REAL),)
# Format 5: who served each compile (TileLang's memory or disk cache, or fresh), its key and the key's components.
ADDED_IN_5 = tuple((name, Text) for name in PROVENANCE_COLUMNS)
# Format 6: how a row was timed (tilelab.tune.row.TRUST_COLUMNS): the method, the noise band of its median,
# and the first timing of a config that was confirmed by a second.
ADDED_IN_6 = (("timing", Text), ("noise_low_ms", _REAL), ("noise_high_ms", _REAL), ("first_ms", _REAL))

_KEY = ("kernel_name", "kernel_hash", "signature", "target", "device")  # RunKey's fields
metadata = MetaData()
tuning_rows = Table(
    "tuning_rows",
    metadata,
    # INTEGER on SQLite, where AUTOINCREMENT needs exactly that; an identity column on PostgreSQL.
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), Identity(), primary_key=True),
    Column("run_id", Text, nullable=False),
    Column("created", _REAL, nullable=False),
    *(Column(name, Text, nullable=False) for name in (*_KEY, "config_key", "config", "status")),
    Column("error", Text),
    *(Column(name, _REAL) for name in ("latency_ms", "tflops", "gbps", "compile_s", "bench_s")),
    Column("tilelang_version", Text),
    *(Column(name, kind) for name, kind in (*ADDED_IN_2, *ADDED_IN_3, *ADDED_IN_4, *ADDED_IN_5, *ADDED_IN_6)),
    Index("tuning_rows_key", "kernel_hash", "signature", "target", "device", "config_key"),
    Index("tuning_rows_run", "run_id", "config_key"),
    sqlite_autoincrement=True,
)
# PostgreSQL has no PRAGMA user_version: a history's format is the one row of this table.
tilelab_format = Table("tilelab_format", metadata, Column("version", Integer, nullable=False))

# What a TuneRow gives a row (its status first), and what every write sets.
ROW_FIELDS = ("status", "error", "latency_ms", "tflops", "gbps", "compile_s", "bench_s",
              *(name for name, _ in (*ADDED_IN_3, *ADDED_IN_4, *ADDED_IN_5, *ADDED_IN_6)))  # fmt: skip
WRITTEN = ("created", *ROW_FIELDS, "tilelang_version", "timeout_s")


class TuningHistoryError(ValueError):
    """The history database cannot be used; the message names the file and the way out."""
