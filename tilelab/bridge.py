"""Comm target ``tilelab``: serves the session's records to the JupyterLab panel.

``%load_ext tilelab`` calls :func:`register`. The panel opens a comm to the
target ``tilelab``; both sides then exchange small JSON messages. The panel
never asks the kernel to run code: it asks for data by id, and the kernel sends
summaries, escaped static HTML snapshots (shown in a sandboxed iframe) and the
mime bundle of a live view it builds itself. ``src/protocol.ts`` mirrors this
description. The protocol's reference and the session that speaks it are one
module: they change together, in one version. What the replies carry (summaries,
snapshots, live views) is shaped by :mod:`tilelab._bridge_items`.

Protocol version 2
------------------
Every message is a JSON object ``{"v": 2, "type": ..., ...}`` (``v`` is the
integer 2). A request may carry ``"seq"`` (an integer, at most 2**53 - 1 in
size); the reply to it echoes that ``seq``.

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
``open`` with ``kind`` and ``id`` (new in 2)
    Reply ``view``: ``kind``, ``id``, ``summary`` and ``bundle``, the mime
    bundle of the item's live view (``application/vnd.jupyter.widget-view+json``
    and ``text/plain``) for the panel to render with the notebook's widget
    manager; a record already shown in the notebook is the same widget. When
    no live view can be built here, ``bundle`` is null and ``problem`` says why
    (the panel then asks for the snapshot).
``clear`` (new in 2)
    Forget the session's records and tuning runs; every subscribed panel gets
    ``list`` (now empty), and so does the asker.

Kernel -> panel (besides the replies above):
``update`` with ``kind`` (``"record"`` or ``"tuning"``) and ``summary``
    A record was added or a tuning run was added or progressed.
``list``
    Pushed to subscribers after a ``clear``.
``error`` with ``code`` (``"version"``, ``"invalid"``, ``"not_found"``, ``"render"``) and ``message``
    A request could not be served; ``code == "version"`` also carries ``supported``.

A record summary is :meth:`KernelRecord.summary` plus ``target``,
``best_latency_ms`` (the best latency of a finished tuning run of the same
kernel name, or ``null``), ``created`` (when the compile finished, seconds
since the epoch), ``run`` (its number among the runs of its kernel name, from
1) and ``current`` (whether it is the run of its name shown last: the
newest compile, or an earlier run shown again from the cell cache). A tuning
summary is the run's ``summary()`` plus ``detail`` (one line of what tells
it from the other runs of its kernel: fixed arguments, swept names, search,
device).
A message of an unknown type, a ``comm_msg`` without data, a ``seq`` that is
not an integer or a ``v`` that is not the integer 2 is answered with an
``error`` (a bad ``seq`` is not echoed). Whatever of the request an error
message or the kernel's log repeats is cut to 200 characters.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from typing import Any, ClassVar

from tilelab._bridge_items import (
    RenderError,
    clip,
    live_view_bundle,
    record_summary,
    runs_by_name,
    snapshot_html,
    tuning_summary,
)
from tilelab.registry import Registry, default_registry
from tilelab.version import __version__

__all__ = ["PROTOCOL_VERSION", "TARGET", "BridgeSession", "register", "unregister"]

PROTOCOL_VERSION = 2
TARGET = "tilelab"

_log = logging.getLogger(__name__)

_KINDS = ("record", "tuning")
_MAX_SEQ = 2**53 - 1  # the panel's numbers are JavaScript's: larger integers lose precision

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


_NO_DATA = object()  # what a comm_msg without data hands to BridgeSession.handle


def _data_of(msg: Any) -> Any:
    """The ``data`` of a ``comm_msg`` (``_NO_DATA`` when the message has none)."""
    content = msg.get("content") if isinstance(msg, dict) else None
    return content.get("data", _NO_DATA) if isinstance(content, dict) else _NO_DATA


def _open(comm: Any, open_msg: dict) -> None:
    session = BridgeSession(comm.send, default_registry())
    _sessions[comm.comm_id] = session
    comm.on_msg(lambda msg: session.handle(_data_of(msg)))
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
        seq = None
        try:
            seq = _seq_of(data)
            kind = _check_envelope(data)
            handler = self._handlers.get(kind)
            if handler is None:
                _log.warning("tilelab bridge: a message of unknown type %s", clip(repr(kind)))
                raise ProtocolError("invalid", f"unknown message type {clip(repr(kind))}")
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
        return {"type": "hello", "protocol": PROTOCOL_VERSION, "tilelab": __version__}

    def _list(self, _data: dict) -> dict:
        runs = [tuning_summary(run) for run in self._registry.tuning_runs()]
        records = self._registry.records()
        by_name = runs_by_name(records)
        summaries = [record_summary(self._registry, record, runs, by_name[record.name]) for record in records]
        return {"type": "list", "records": summaries, "tuning": runs}

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
        item = self._find(kind, item_id)
        summary = record_summary(self._registry, item) if kind == "record" else tuning_summary(item)
        reply = {"type": "item", "kind": kind, "id": item_id, "summary": summary}
        if want_html:
            try:
                reply["html"] = snapshot_html(item, kind)
            except RenderError as error:
                raise ProtocolError("render", str(error)) from error
        return reply

    def _open(self, data: dict) -> dict:
        kind, item_id = data.get("kind"), data.get("id")
        if kind not in _KINDS or not isinstance(item_id, str):
            raise ProtocolError("invalid", "open needs kind ('record' or 'tuning') and id (a string)")
        item = self._find(kind, item_id)
        summary = record_summary(self._registry, item) if kind == "record" else tuning_summary(item)
        bundle, problem = live_view_bundle(item, kind)
        return {"type": "view", "kind": kind, "id": item_id, "summary": summary, "bundle": bundle, "problem": problem}

    def _clear(self, data: dict) -> dict | None:
        self._registry.clear()  # subscribed sessions, this one too, get the empty list pushed
        return None if self._unsubscribe is not None else self._list(data)

    def _find(self, kind: str, item_id: str) -> Any:
        try:
            return self._registry.get(item_id) if kind == "record" else self._registry.tuning_run(item_id)
        except KeyError:
            raise ProtocolError("not_found", f"no {kind} with id {clip(repr(item_id))} in this kernel") from None

    # The requests a panel may make, by message type.
    _handlers: ClassVar[dict[str, Callable[[BridgeSession, dict], dict | None]]] = {
        "hello": _hello,
        "list": _list,
        "subscribe": _subscribe,
        "unsubscribe": _stop,
        "get": _get,
        "open": _open,
        "clear": _clear,
    }

    # -- pushes ---------------------------------------------------------------
    def _on_change(self, event: str, item: Any) -> None:
        if event == "clear":
            self._reply(self._list({}))
        elif event == "record":
            # Every run of its name: "current" (the one shown last) may have moved off another run.
            for record in self._registry.records():
                if record.name == item.name:
                    self._reply({"type": "update", "kind": "record", "summary": record_summary(self._registry, record)})
        elif event == "tuning":
            run = tuning_summary(item)
            self._reply({"type": "update", "kind": "tuning", "summary": run})
            # A finished run sets the best latency of its kernel's records.
            for record in self._registry.records():
                if record.name == run.get("name") and run.get("best_latency_ms") is not None:
                    self._reply({"type": "update", "kind": "record", "summary": record_summary(self._registry, record)})

    def _reply(self, message: dict, seq: int | None = None) -> None:
        message = {"v": PROTOCOL_VERSION, **message}
        if seq is not None:
            message["seq"] = seq
        self._send(message)


def _seq_of(data: Any) -> int | None:
    """The request's ``seq`` (None without one); a ``seq`` that is not an integer is refused."""
    if not isinstance(data, dict) or "seq" not in data:
        return None
    seq = data["seq"]
    if not (_is_integer(seq) and abs(seq) <= _MAX_SEQ):
        raise ProtocolError("invalid", f"seq must be an integer of at most 2**53 - 1, not {clip(repr(seq))}")
    return seq


def _check_envelope(data: Any) -> str:
    """The message's type, once its envelope is valid."""
    if data is _NO_DATA:
        raise ProtocolError("invalid", "a comm message needs data (a JSON object)")
    if not isinstance(data, dict):
        raise ProtocolError("invalid", f"a message must be a JSON object, not {type(data).__name__}")
    version = data.get("v")
    if not _is_integer(version) or version != PROTOCOL_VERSION:
        raise ProtocolError(
            "version",
            f"protocol version {clip(repr(version))} is not supported by this kernel (it speaks {PROTOCOL_VERSION})",
        )
    kind = data.get("type")
    if not isinstance(kind, str) or not kind:
        raise ProtocolError("invalid", "a message needs a 'type' string")
    return kind


def _is_integer(value: Any) -> bool:
    return type(value) is int  # bool is an int subclass; JSON true is not a number
