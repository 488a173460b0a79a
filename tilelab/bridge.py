"""Comm target ``tilelab``: serves the session's records to the JupyterLab panel.

``%load_ext tilelab`` calls :func:`register`. The panel opens a comm to the
target ``tilelab``; both sides then exchange small JSON messages. The panel
never asks the kernel to run code, and the kernel sends data only (summaries
and escaped static HTML snapshots, which the panel shows in a sandboxed
iframe). ``src/protocol.ts`` mirrors this description.

Protocol version 1
------------------
Every message is a JSON object ``{"v": 1, "type": ..., ...}``. A request may
carry ``"seq"`` (an integer); the reply to it echoes that ``seq``.

Panel -> kernel:

``hello``
    Reply ``hello`` with ``tilelab`` (the package version) and ``protocol``.
``list``
    Reply ``list``: ``records`` (record summaries, oldest first) and
    ``tuning`` (tuning-run summaries).
``subscribe``
    Reply ``list`` as above, then push ``update`` messages on every change.
``unsubscribe``
    Stop the pushes (no reply).
``get`` with ``kind`` (``"record"`` or ``"tuning"``), ``id`` and optional ``html`` (bool)
    Reply ``item``: ``kind``, ``id``, ``summary`` and, when ``html`` is true,
    ``html`` (the self-contained static snapshot: no scripts, inline CSS).

Kernel -> panel (besides the replies above):

``update`` with ``kind`` (``"record"`` or ``"tuning"``) and ``summary``
    A record was added or a tuning run was added or progressed.
``error`` with ``code`` (``"version"``, ``"invalid"``, ``"not_found"``, ``"render"``) and ``message``
    A request could not be served; ``code == "version"`` also carries ``supported``.

A record summary is :meth:`KernelRecord.summary` plus ``target`` and
``best_latency_ms`` (the best latency of a finished tuning run of the same
kernel name, or ``null``). A tuning summary is the run's ``summary()``.
Messages of an unknown type are ignored with a logged warning.
"""

from __future__ import annotations

import html
import logging
import math
import weakref
from collections.abc import Callable
from typing import Any, ClassVar

from tilelab.registry import Registry, default_registry

__all__ = ["PROTOCOL_VERSION", "TARGET", "BridgeSession", "register", "unregister"]

PROTOCOL_VERSION = 1
TARGET = "tilelab"

_log = logging.getLogger(__name__)

_KINDS = ("record", "tuning")

# The open panels' sessions by comm id, so that unregister can stop their pushes
# (a comm closed from the kernel side gets no close callback). Weak: the comm owns them.
_sessions: weakref.WeakValueDictionary[str, BridgeSession] = weakref.WeakValueDictionary()


class ProtocolError(ValueError):
    """A message that breaks the protocol; ``code`` goes back to the panel."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def register(ipython: Any) -> None:
    """Register the comm target ``tilelab`` on ``ipython``'s kernel (idempotent).

    Does nothing in a shell without a kernel (plain IPython).
    """
    manager = _comm_manager(ipython)
    if manager is not None:
        manager.register_target(TARGET, _open)


def unregister(ipython: Any) -> None:
    """Remove the comm target and close the panel's open comms (idempotent)."""
    manager = _comm_manager(ipython)
    if manager is None:
        return
    manager.targets.pop(TARGET, None)
    for comm in list(manager.comms.values()):
        if getattr(comm, "target_name", None) == TARGET:
            session = _sessions.pop(comm.comm_id, None)
            if session is not None:
                session.close()
            comm.close()


def _comm_manager(ipython: Any) -> Any:
    kernel = getattr(ipython, "kernel", None)
    return getattr(kernel, "comm_manager", None) if kernel is not None else None


def _open(comm: Any, open_msg: dict) -> None:
    session = BridgeSession(comm.send, default_registry())
    _sessions[comm.comm_id] = session
    comm.on_msg(lambda msg: session.handle(msg["content"]["data"]))
    comm.on_close(lambda _msg: session.close())
    data = open_msg.get("content", {}).get("data")
    if data:
        session.handle(data)


class BridgeSession:
    """One panel's conversation: validates requests, answers them, pushes updates.

    Parameters
    ----------
    send
        Sends one JSON-ready dict to the panel (``comm.send``).
    registry
        The records and tuning runs served.
    """

    def __init__(self, send: Callable[[dict], Any], registry: Registry) -> None:
        self._send = send
        self._registry = registry
        self._unsubscribe: Callable[[], None] | None = None

    def handle(self, data: Any) -> None:
        """Answer one message from the panel."""
        seq = data.get("seq") if isinstance(data, dict) else None
        seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else None
        try:
            kind = _check_envelope(data)
            handler = self._handlers.get(kind)
            if handler is None:
                _log.warning("tilelab bridge: ignoring a message of unknown type %r", kind)
                return
            reply = handler(self, data)
        except ProtocolError as error:
            reply = {"type": "error", "code": error.code, "message": str(error)}
            if error.code == "version":
                reply["supported"] = [PROTOCOL_VERSION]
        if reply is not None:
            self._reply(reply, seq)

    def close(self) -> None:
        """Stop pushing updates (the comm closed)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # -- requests -------------------------------------------------------------
    def _hello(self, _data: dict) -> dict:
        from tilelab import __version__

        return {"type": "hello", "protocol": PROTOCOL_VERSION, "tilelab": __version__}

    def _list(self, _data: dict) -> dict:
        runs = [_tuning_summary(run) for run in self._registry.tuning_runs()]
        records = [self._record_summary(record, runs) for record in self._registry.records()]
        return {"type": "list", "records": records, "tuning": runs}

    def _subscribe(self, data: dict) -> dict:
        if self._unsubscribe is None:
            self._unsubscribe = self._registry.subscribe(self._on_change)
        return self._list(data)

    def _stop(self, _data: dict) -> None:
        self.close()

    def _get(self, data: dict) -> dict:
        kind, item_id, want_html = data.get("kind"), data.get("id"), data.get("html", False)
        if kind not in _KINDS or not isinstance(item_id, str) or not isinstance(want_html, bool):
            raise ProtocolError("invalid", "get needs kind ('record' or 'tuning'), id (a string) and html (a bool)")
        try:
            item = self._registry.get(item_id) if kind == "record" else self._registry.tuning_run(item_id)
        except KeyError:
            raise ProtocolError("not_found", f"no {kind} with id {item_id!r} in this kernel") from None
        summary = self._record_summary(item) if kind == "record" else _tuning_summary(item)
        reply = {"type": "item", "kind": kind, "id": item_id, "summary": summary}
        if want_html:
            reply["html"] = _snapshot_html(item, kind)
        return reply

    # The requests a panel may make, by message type.
    _handlers: ClassVar[dict[str, Callable[[BridgeSession, dict], dict | None]]] = {
        "hello": _hello,
        "list": _list,
        "subscribe": _subscribe,
        "unsubscribe": _stop,
        "get": _get,
    }

    # -- pushes ---------------------------------------------------------------
    def _on_change(self, event: str, item: Any) -> None:
        if event == "record":
            self._reply({"type": "update", "kind": "record", "summary": self._record_summary(item)})
        elif event == "tuning":
            run = _tuning_summary(item)
            self._reply({"type": "update", "kind": "tuning", "summary": run})
            # A finished run sets the best latency of its kernel's records.
            for record in self._registry.records():
                if record.name == run.get("name") and run.get("best_latency_ms") is not None:
                    self._reply({"type": "update", "kind": "record", "summary": self._record_summary(record)})

    def _reply(self, message: dict, seq: int | None = None) -> None:
        message = {"v": PROTOCOL_VERSION, **message}
        if seq is not None:
            message["seq"] = seq
        self._send(message)

    def _record_summary(self, record: Any, runs: list[dict] | None = None) -> dict:
        if runs is None:
            runs = [_tuning_summary(run) for run in self._registry.tuning_runs()]
        latencies = [
            run["best_latency_ms"]
            for run in runs
            if run.get("name") == record.name and _is_number(run.get("best_latency_ms"))
        ]
        return {**record.summary(), "target": record.target, "best_latency_ms": min(latencies, default=None)}


def _check_envelope(data: Any) -> str:
    """The message's type, once its envelope is valid."""
    if not isinstance(data, dict):
        raise ProtocolError("invalid", f"a message must be a JSON object, not {type(data).__name__}")
    version = data.get("v")
    if version != PROTOCOL_VERSION or isinstance(version, bool):
        raise ProtocolError(
            "version", f"protocol version {version!r} is not supported by this kernel (it speaks {PROTOCOL_VERSION})"
        )
    kind = data.get("type")
    if not isinstance(kind, str) or not kind:
        raise ProtocolError("invalid", "a message needs a 'type' string")
    return kind


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _tuning_summary(run: Any) -> dict:
    summary = dict(run.summary())
    summary.setdefault("id", run.id)
    return summary


def _snapshot_html(item: Any, kind: str) -> str:
    """The item's static HTML snapshot (an escaped summary table if it has none)."""
    try:
        view = _view_of(item, kind)
        to_html = getattr(view, "to_html", None)
        if callable(to_html):
            text = to_html()
        else:
            # Only the snapshot is wanted, never the live widget.
            bundle = view._repr_mimebundle_(include={"text/html"}) if hasattr(view, "_repr_mimebundle_") else None
            bundle = bundle[0] if isinstance(bundle, tuple) else bundle
            text = bundle.get("text/html") if isinstance(bundle, dict) else None
    except Exception as error:
        # The edge between the kernel and the panel: a broken view must become a
        # message in the panel, not a traceback in whatever cell runs next.
        raise ProtocolError("render", f"could not render the {kind}: {type(error).__name__}: {error}") from error
    if isinstance(text, str):
        return text
    return _summary_table(_tuning_summary(item) if kind == "tuning" else item.summary())


def _view_of(item: Any, kind: str) -> Any:
    if kind == "record":
        from tilelab.views import record_view

        return record_view(item)
    try:
        from tilelab.views.tuning import TuningView
    except ModuleNotFoundError as error:
        if error.name != "tilelab.views.tuning":
            raise
        return item
    return TuningView(item)


def _summary_table(summary: dict) -> str:
    rows = "".join(
        f"<tr><th>{html.escape(str(key))}</th><td>{html.escape(str(value))}</td></tr>" for key, value in summary.items()
    )
    return f"<table class='tilelab-summary'>{rows}</table>"
