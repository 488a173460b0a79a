"""The Passes tab: pass list, filters, time chart, and one pass's IR and diff fetched on selection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets

from tilelab.records import KernelRecord
from tilelab.views._passdata import MODES, pass_payload, pass_rows

__all__ = ["PassesWidget"]

_ASSETS = Path(__file__).parent / "assets"


class PassesWidget(anywidget.AnyWidget):
    """Pass list of one record; the IR of the selected pass is sent on request, never synced.

    Synced traits stay small: the per-pass rows (no IR), the selected pass
    index and the diff mode. The browser asks for a pass with a
    ``{"type": "fetch"}`` custom message and gets :func:`pass_payload`'s dict back.
    """

    _esm = _ASSETS / "passes.js"
    _css = _ASSETS / "tilelab.css"

    passes = traitlets.List().tag(sync=True)
    selected = traitlets.Int(-1).tag(sync=True)
    mode = traitlets.Unicode("unified").tag(sync=True)
    changed_only = traitlets.Bool(False).tag(sync=True)

    def __init__(self, record: KernelRecord, **kwargs: Any) -> None:
        super().__init__(passes=pass_rows(record.passes), **kwargs)
        self._passes = record.passes
        self.on_msg(self._on_message)

    def payload(self, index: int | None = None, mode: str | None = None) -> dict[str, Any]:
        """The message sent for pass ``index`` (default: the selected one)."""
        return pass_payload(self._passes, self.selected if index is None else index, mode or self.mode)

    @traitlets.validate("mode")
    def _check_mode(self, proposal: dict[str, Any]) -> str:
        if proposal["value"] not in MODES:
            raise traitlets.TraitError(f"diff mode {proposal['value']!r} is not one of {MODES}")
        return proposal["value"]

    @traitlets.observe("selected", "mode")
    def _push(self, _change: Any = None) -> None:
        if self.selected >= 0 and self._passes:
            self.send(self.payload())

    def _on_message(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("type") == "fetch":
            self._push()

    def __repr__(self) -> str:
        return f"<PassesWidget {len(self.passes)} passes, selected {self.selected}>"
