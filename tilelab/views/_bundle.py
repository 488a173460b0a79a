"""The contract every view follows: live widget + static HTML + short text in one mime bundle."""

from __future__ import annotations

import html
import sys
import warnings
from typing import Any

from tilelab.views._live import live_views
from tilelab.views.html import sanitiser_proof

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# Which widget, made by which kernel session: TileLab's JupyterLab extension shows the widget only while
# that session runs, and the text/html snapshot beside it otherwise (a reopened notebook, a restart).
VIEW_MIME = "application/vnd.tilelab.view+json"


class BundleView:
    """Base of views: subclasses implement ``_build_widget``, ``_build_html`` and ``_text``.

    The widget and the snapshot are built once, on first use, so constructing a
    view is cheap and ``__repr__`` never serialises widget traits. A view whose
    ``live_key`` is not None keeps one live widget tree per key: building its
    widget closes the tree of the previous view of that key (see :mod:`tilelab.views._live`).
    """

    _widget: Any = None
    _html: str | None = None

    @property
    def widget(self):
        """The live widget (built on first access, and again after it was closed)."""
        if self._widget is None or self._widget.comm is None:  # a closed widget has no comm
            self._widget = self._build_widget()
            key = self.live_key()
            if key is not None:
                live_views().adopt(key, self._widget)
        return self._widget

    @property
    def widget_open(self) -> bool:
        """Whether the live widget was built and is still open (never builds it)."""
        return self._widget is not None and self._widget.comm is not None

    def snapshot_bundle(self) -> dict[str, str]:
        """The mime bundle without the live widget: the static snapshot and the short text."""
        return {"text/html": self.to_html(), "text/plain": self._text()}

    def to_html(self) -> str:
        """The self-contained static HTML snapshot (no scripts, inline CSS only)."""
        if self._html is None:
            self._html = sanitiser_proof(self._build_html())
        return self._html

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        try:
            problem = self.widget_problem()
            if problem is not None:
                # No live widget can load: one line saying why, above the static snapshot.
                notice = sanitiser_proof(f"<p data-tilelab='no-bundle' style='color:var(--jp-warn-color1,#9a6700)'>{html.escape(problem)}</p>")
                return {"text/html": notice + self.to_html(), "text/plain": self._text()}
            widget = self.widget
            return {
                WIDGET_MIME: {"version_major": 2, "version_minor": 0, "model_id": widget.model_id},
                VIEW_MIME: {"model_id": widget.model_id, "session": kernel_session()},
                "text/html": self.to_html(),
                "text/plain": self._text(),
            }
        except Exception as exc:
            # IPython swallows exceptions raised by repr methods: say so before re-raising.
            warnings.warn(f"TileLab could not render {type(self).__name__}: {exc!r}", stacklevel=2)
            raise

    def __repr__(self) -> str:
        return self._text()

    def widget_problem(self) -> str | None:
        """Why the live widget cannot be shown here (its front-end bundle is missing), or None."""
        return None

    def live_key(self) -> Any:
        """The key under which this view's widget is the one live tree (None: not tracked)."""
        return None

    def _build_widget(self):
        raise NotImplementedError

    def _build_html(self) -> str:
        raise NotImplementedError

    def _text(self) -> str:
        raise NotImplementedError



def kernel_session() -> str | None:
    """The id of this kernel's messaging session (the ``header.session`` of what it sends), None outside a kernel."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    session = getattr(getattr(getattr(shell, "kernel", None), "session", None), "session", None)
    return session if isinstance(session, str) and session else None


def live_bundle(view: Any) -> dict[str, Any] | None:
    """The widget-view bundle of ``view``: the tree already live for its key, else a new one (None: no widgets here).

    The side panel shows a record through this: when the notebook already shows
    the record's Explorer, the panel's tab is a second view of that same widget,
    so nothing the notebook shows is closed.
    """
    if not isinstance(view, BundleView) or view.widget_problem() is not None:
        return None
    key = view.live_key()
    tree = live_views().get(key) if key is not None else None
    widget = tree if tree is not None else view.widget
    return {
        WIDGET_MIME: {"version_major": 2, "version_minor": 0, "model_id": widget.model_id},
        "text/plain": repr(view),
    }
