"""The tuning history: every row stored as soon as it exists, in SQLite or PostgreSQL, through SQLAlchemy Core.

Rows are keyed by the kernel's source hash, its argument signature, the target
and the device, so a re-run of the same sweep can skip what was measured. The
database is named by ``db=`` or ``TILELAB_DB``: a file (default
``~/.tilelab/tilelab.db``), ``":memory:"`` for none, or a ``postgresql://`` URL
(psycopg 3, the ``cluster`` extra), where several hosts tuning the same kernel
share what each measured. One table definition serves both (:mod:`.schema`).
An SQLite file runs in WAL mode with one transaction per row: a kernel that dies
mid-sweep loses at most the row it was writing and never corrupts the file. A
config that compiled is written at once (status ``compiled``) and its row is
updated when its benchmark ends.

The history is checked when the store opens, before anything compiles: a
directory, a file that is not SQLite, another program's database or table, a
newer format, a file TileLab cannot write or a server that cannot be reached
raises :class:`TuningHistoryError` in one line, never with a password in it.
Older formats are migrated in place (:mod:`.migrate`): version 1 (no version
stored, no ``timeout_s`` column), version 2 (no latency spread, re-benchmark,
machine-code or search columns), version 3 (no ``roofline_ms``), version 4 (no
provenance: who served each compile and TileLang's cache key and its components,
:data:`tilelab.provenance.PROVENANCE_COLUMNS`), version 5 (no ``timing``,
``noise_low_ms``, ``noise_high_ms`` or ``first_ms``: how each row was timed,
:data:`tilelab.tune.row.TRUST_COLUMNS`).
"""

from tilelab.tune.store.history import TuningStore, default_db_path, open_history, tuning_history
from tilelab.tune.store.rows import RunKey, StoredRow, signature_of
from tilelab.tune.store.schema import SCHEMA_VERSION, TuningHistoryError

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
