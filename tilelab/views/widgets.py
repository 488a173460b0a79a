"""The anywidget classes of TileLab's views, in one place, over one front-end bundle.

The front-end is TypeScript in ``src/widgets/`` built by ``npm run build:prod``
(``make setup`` runs it) into :data:`BUNDLE`, an ES module shipped in the wheel;
anywidget loads it from that path. Every widget keeps its synced traits small
(ids, selections, the pass rows) and answers the front-end's requests, custom
messages ``{"id", "type", ...}``, with ``{"id", "type", ...}`` or
``{"id", "error"}``: large texts never sit in synced state.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import traitlets

__all__ = ["BUNDLE", "CSS", "CompareWidget", "ExplorerWidget", "RequestWidget", "TuningWidget", "bundle_problem"]

BUNDLE = Path(__file__).parent / "static" / "explorer.js"
CSS = Path(__file__).parent / "assets" / "tilelab.css"

Handler = Callable[[dict[str, Any]], dict[str, Any]]


def bundle_problem() -> str | None:
    """One line saying the front-end bundle is missing (and how to build it), or None when it is there."""
    if BUNDLE.is_file():
        return None
    return (
        f"TileLab's widget bundle is missing ({BUNDLE.name} was never built here): "
        "run `make setup` or `npm ci && npm run build:prod` in the TileLab checkout; showing the static view."
    )


def _esm() -> Any:
    return BUNDLE if BUNDLE.is_file() else "export default { render() {} };"


class RequestWidget(anywidget.AnyWidget):
    """An anywidget that answers the front-end's requests with its ``handlers`` (message type → function)."""

    _esm = _esm()
    _css = CSS
    kind = traitlets.Unicode("").tag(sync=True)  # which view the bundle renders

    def __init__(self, handlers: dict[str, Handler] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.handlers: dict[str, Handler] = dict(handlers or {})
        self.on_msg(self._on_message)

    def answer(self, content: dict[str, Any]) -> dict[str, Any]:
        """The reply to request ``content`` (what is sent back to the browser)."""
        kind = content.get("type")
        reply: dict[str, Any] = {"id": content.get("id"), "type": kind}
        handler = self.handlers.get(str(kind))
        if handler is None:
            return {**reply, "error": f"TileLab cannot answer a {kind!r} request here"}
        try:
            return {**reply, **handler(content)}
        except (KeyError, ValueError, TypeError) as exc:  # a bad request: say why in the view, keep the widget alive
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            return {**reply, "error": str(message)}

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not (isinstance(content, dict) and "id" in content):
            return
        try:
            reply = self.answer(content)
        except Exception as exc:
            # TileLab's own bug: the view says so at once (instead of waiting forever), the traceback goes to the log.
            self.send({"id": content["id"], "type": content.get("type"), "error": f"TileLab failed: {exc!r}"})
            raise
        self.send(reply)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.kind}>"


class ExplorerWidget(RequestWidget):
    """The Explorer's tabs (Overview, Passes, Source, Machine code, ...): one record, its texts fetched on request."""

    title = traitlets.Unicode("").tag(sync=True)
    tabs = traitlets.List().tag(sync=True)  # [{"id", "title", "kind", "request"?}]
    tab = traitlets.Unicode("overview").tag(sync=True)
    passes = traitlets.Dict().tag(sync=True)  # the Passes tab's summary: views.passes.data.passes_data
    pass_index = traitlets.Int(-1).tag(sync=True)
    base_index = traitlets.Int(-1).tag(sync=True)  # -1: the pass before
    diff_mode = traitlets.Enum(("split", "unified", "ir"), "split").tag(sync=True)
    ignore_whitespace = traitlets.Bool(True).tag(sync=True)
    source_line = traitlets.Int(-1).tag(sync=True)  # the selected cell line
    cuda_line = traitlets.Int(-1).tag(sync=True)  # the CUDA line selected in the Machine code tab
    machine_updates = traitlets.Int(0).tag(sync=True)  # bumped when the record's machine code arrives
    layout_buffer = traitlets.Unicode("").tag(sync=True)  # the layout the Layouts tab shows ("": its first fragment)

    @traitlets.validate("tab")
    def _check_tab(self, proposal: dict[str, Any]) -> str:
        ids = [tab["id"] for tab in self.tabs]
        if ids and proposal["value"] not in ids:
            raise traitlets.TraitError(f"tab {proposal['value']!r} is not one of {ids}")
        return proposal["value"]

    def __repr__(self) -> str:
        return f"<ExplorerWidget {self.title}: tab {self.tab}, {len(self.passes.get('rows', ()))} passes>"


class TuningWidget(RequestWidget):
    """A tuning run: the front-end asks for its data dict (``tuning``) again whenever ``revision`` moves."""

    revision = traitlets.Int(0).tag(sync=True)  # bumped as the run goes on

    def __repr__(self) -> str:
        return f"<TuningWidget revision {self.revision}>"


class CompareWidget(RequestWidget):
    """Two records' passes aligned by name; the selected row's IRs are diffed on request."""

    labels = traitlets.List().tag(sync=True)
    rows = traitlets.List().tag(sync=True)  # [name_a, index_a, name_b, index_b, same]
    only = traitlets.List().tag(sync=True)
    selected = traitlets.Int(-1).tag(sync=True)
    diff_mode = traitlets.Unicode("split").tag(sync=True)
    ignore_whitespace = traitlets.Bool(True).tag(sync=True)

    def __repr__(self) -> str:
        return f"<CompareWidget {len(self.rows)} rows>"
