"""The Layouts tab: every layout of one record on the live grid (``src/widgets/layouts.ts``).

Synced state stays small: each layout's facts (:func:`layout_entries`), the
palette and the selected buffer. The browser asks for one tile at a time with
``{"id", "type": "grid", "name", "replica", "tile"}`` and gets
:func:`grid_payload`'s facts back (same ``id``; ``{"id", "error"}`` for a bad
request) with its tables as two binary buffers, so a
128 x 128 fragment costs 128 kB once, when it is first shown, and nothing in
the saved notebook.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets

from tilelab.records import KernelRecord
from tilelab.views.layout import PALETTE, grid_payload, layout_entries

__all__ = ["BUNDLE", "LayoutsWidget"]

BUNDLE = Path(__file__).parent / "static" / "layouts.js"  # built from src/widgets/layouts.ts by npm
_ASSETS = Path(__file__).parent / "assets"


class LayoutsWidget(anywidget.AnyWidget):
    """The live layout grid of every layout of ``record`` (``T<thread>/L<local>`` cells, absolute thread ids)."""

    # Without a built bundle the Explorer shows its static snapshot (widgets.bundle_problem): an empty view here.
    _esm = BUNDLE if BUNDLE.is_file() else "export default { render() {} };"
    _css = _ASSETS / "layouts.css"

    layouts = traitlets.List().tag(sync=True)
    palette = traitlets.Dict().tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)

    def __init__(self, record: KernelRecord, **kwargs: Any) -> None:
        entries = layout_entries(record.layouts)
        first = next((e["name"] for e in entries if e["kind"] == "fragment"), entries[0]["name"] if entries else "")
        palette = {"hues": list(PALETTE["hues"]), "shades": PALETTE["shades"]}
        super().__init__(layouts=entries, palette=palette, selected=first, **kwargs)
        self._layouts = dict(record.layouts)
        self.on_msg(self._on_message)

    def reply(self, request: dict[str, Any]) -> tuple[dict[str, Any], list[bytes]]:
        """The answer to one ``grid`` request: the tile's facts and buffers, or ``{"id", "type", "error"}``."""
        head = {"id": request.get("id"), "type": "grid"}
        name, replica, tile = request.get("name"), request.get("replica", 0), request.get("tile", 0)
        layout = self._layouts.get(name) if isinstance(name, str) else None
        if layout is None:
            return {**head, "error": f"no layout called {name!r} in this record"}, []
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (replica, tile)):
            return {**head, "error": "replica and tile must be integers"}, []
        try:
            meta, buffers = grid_payload(layout, replica, tile)
        except ValueError as error:
            return {**head, "error": str(error)}, []
        return {**head, "name": name, **meta}, buffers

    def show(self) -> None:
        """Kept for the Explorer's tab hook: the browser fetches a tile when the tab becomes visible."""

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "grid":
            message, buffers = self.reply(content)
            self.send(message, buffers)

    def __repr__(self) -> str:
        return f"<LayoutsWidget {len(self._layouts)} layouts, selected {self.selected!r}>"
