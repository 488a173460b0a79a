"""How TileLab's objects display: IPython formatters and named renderers, wired here so records and tune stay view-free.

``%load_ext tilelab`` calls :func:`register`; every public call of
``tilelab`` (explore, tune, compare, load, ...) calls :func:`ensure_registered`,
so a record displays as its Explorer in any IPython session. Records and tune
results know nothing of views: a formatter for each type :func:`tilelab.views.view_for`
maps asks it for the view.
"""

from __future__ import annotations

import sys
from typing import Any

from tilelab import _hooks
from tilelab.registry import default_registry
from tilelab.views import view_for, viewed_types
from tilelab.views.layouts.plots import layout_figure, layout_matplotlib

__all__ = ["ensure_registered", "register", "register_renderers"]

_registered_shells: set[int] = set()
_renderers_registered = False


def _bundle(obj: Any) -> dict[str, Any]:
    return view_for(obj)._repr_mimebundle_()


def register_renderers() -> None:
    """The renderers records call by name (``layout.plot()``, ``layout.to_matplotlib()``)."""
    global _renderers_registered
    if _renderers_registered:
        return

    _hooks.register("layout_figure", layout_figure)
    _hooks.register("layout_matplotlib", layout_matplotlib)
    _renderers_registered = True


def register(shell: Any) -> None:
    """Display records and tuning results through their views in ``shell``; show running sweeps live."""

    register_renderers()
    if id(shell) in _registered_shells:
        return
    formatter = shell.display_formatter.mimebundle_formatter
    for cls in viewed_types():  # records, tuning results, ...: whatever views.view_for shows
        formatter.for_type(cls, _bundle)
    default_registry().subscribe(_LiveTuning().on_event)
    _registered_shells.add(id(shell))


class _LiveTuning:
    """Shows a sweep's live view when the registry first announces it; swaps in the final snapshot at its end."""

    def __init__(self) -> None:
        self.shown: dict[str, tuple[Any, Any]] = {}  # run id -> (view, display handle)

    def on_event(self, event: str, run: Any) -> None:
        if event != "tuning" or not getattr(run, "show_live", False):
            return
        if run.id not in self.shown:
            if run.running or run.done:
                return  # a run already under way when TileLab was loaded: not ours to show
            from IPython.display import display


            view = view_for(run)
            self.shown[run.id] = (view, display(view, display_id=True))
            return
        if not run.running:
            view, handle = self.shown.pop(run.id)
            view.refresh(final=True)
            handle.update(view)  # the widget stays; the saved text/html is the finished table


def ensure_registered() -> None:
    """:func:`register` in the running IPython shell, if there is one (cheap when already done)."""
    register_renderers()
    if "IPython" not in sys.modules:
        return
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        register(shell)

