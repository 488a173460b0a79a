"""The session's kernel records and tuning runs, with change listeners.

The registry owns the session's history (bounded); the bridge and views read
it and subscribe to it. Listeners get ``(event, item)`` where ``event`` is
``"record"`` (a new :class:`~tilelab.records.KernelRecord`), ``"tuning"``
(a tuning run was added or progressed; the item has ``id`` and ``summary()``)
or ``"clear"`` (everything was forgotten; the item is None).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

from tilelab.records import KernelRecord

__all__ = ["LIMIT", "Bounded", "Registry", "TuningRun", "default_registry"]

_log = logging.getLogger(__name__)

Listener = Callable[[str, Any], None]

LIMIT = 256  # records, tuning runs, and the magic's cached cells


class Bounded(OrderedDict):
    """A dict of at most ``limit`` entries: setting or getting an entry makes it the newest, and the oldest go first.

    ``on_evict(key, value)`` is called for each entry dropped to keep the bound.
    """

    def __init__(self, limit: int = LIMIT, on_evict: Callable[[Any, Any], None] | None = None) -> None:
        super().__init__()
        self.limit = limit
        self._on_evict = on_evict

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.limit:
            old_key, old_value = self.popitem(last=False)
            if self._on_evict is not None:
                self._on_evict(old_key, old_value)

    def get(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            return default
        self.move_to_end(key)
        return super().__getitem__(key)

    def replace(self, key: Any, value: Any) -> None:
        """Set ``key`` to ``value`` where it stands (a new key comes in as the newest)."""
        if key in self:
            super().__setitem__(key, value)
        else:
            self[key] = value


class TuningRun(Protocol):
    """What the registry needs of a tuning run (``tilelab.tune.result.TuneResult``)."""

    id: str

    def summary(self) -> dict[str, Any]: ...


class Registry:
    """Kernel records and tuning runs of one session, newest last."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._records: Bounded[str, KernelRecord] = Bounded(limit)
        self._tuning: Bounded[str, TuningRun] = Bounded(limit)
        self._listeners: list[Listener] = []
        self._lock = threading.RLock()

    @property
    def limit(self) -> int:
        """How many records (and, apart, tuning runs) the registry keeps; the oldest go first."""
        return self._records.limit

    def add(self, record: KernelRecord) -> KernelRecord:
        """Add ``record`` as the newest shown (a cache hit of an earlier run is shown again: it becomes the newest)."""
        with self._lock:
            self._records[record.id] = record
        self._notify("record", record)
        return record

    def update(self, record: KernelRecord) -> KernelRecord:
        """Replace the record of ``record``'s id where it stands (its machine code or profile arrived later)."""
        with self._lock:
            self._records.replace(record.id, record)
        self._notify("record", record)
        return record

    def get(self, record_id: str) -> KernelRecord:
        return self._find(self._records, record_id, "kernel record")

    def records(self) -> list[KernelRecord]:
        with self._lock:
            return list(self._records.values())

    def latest(self, name: str) -> KernelRecord | None:
        """The record of the kernel called ``name`` shown last (its current run)."""
        with self._lock:
            for record in reversed(self._records.values()):
                if record.name == name:
                    return record
        return None

    def track_tuning(self, run: TuningRun) -> None:
        """Add a tuning run, or announce that it progressed."""
        with self._lock:
            self._tuning[run.id] = run
        self._notify("tuning", run)

    def tuning_run(self, run_id: str) -> TuningRun:
        return self._find(self._tuning, run_id, "tuning run")

    def tuning_runs(self) -> list[TuningRun]:
        with self._lock:
            return list(self._tuning.values())

    def _find(self, items: Bounded, item_id: str, what: str) -> Any:
        with self._lock:
            if item_id in items:
                return items[item_id]
        raise KeyError(f"no {what} with id {item_id!r}")

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event, item)`` on every change; returns an unsubscribe function."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def clear(self) -> None:
        """Forget every record and tuning run; listeners get a ``("clear", None)`` event."""
        with self._lock:
            self._records.clear()
            self._tuning.clear()
        self._notify("clear", None)

    def _notify(self, event: str, item: Any) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            # A broken listener (a closed comm) must not break a compile.
            try:
                listener(event, item)
            except Exception:
                _log.warning("tilelab registry listener %r failed", listener, exc_info=True)


@functools.cache
def default_registry() -> Registry:
    """The registry of this Python session."""
    return Registry()
