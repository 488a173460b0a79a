"""Views: renderings of records and results (live widgets plus static HTML snapshots).

Views only read records. Every view returns an object whose
``_repr_mimebundle_`` carries the live widget (where it has one), a
self-contained static ``text/html`` snapshot and a short ``text/plain``.
:func:`view_for` is the one map from an object to its view: IPython's display
(:mod:`tilelab.display`), the snapshots that leave the notebook
(:mod:`tilelab.sharing`) and the side panel (:mod:`tilelab.bridge`) all ask it.
``import tilelab`` does not import this package.
"""

from __future__ import annotations

from functools import singledispatch
from typing import Any

from tilelab.recompiled import WhyRecompiled
from tilelab.records import KernelRecord
from tilelab.runs import SinceLastRun
from tilelab.tune.result import TuneResult
from tilelab.views._bundle import BundleView
from tilelab.views.compare.changes import SinceLastRunView, WhyView
from tilelab.views.explorer import ExplorerView
from tilelab.views.tuning import TuningView

__all__ = ["record_view", "view_for", "viewed_types"]


def record_view(record: KernelRecord) -> ExplorerView:
    """The Explorer of ``record`` (tabs Overview · Passes · Source · Layouts · Machine code).

    Parameters
    ----------
    record
        A :class:`~tilelab.records.KernelRecord`, successful or failed.
    """
    return ExplorerView(record)


@singledispatch
def view_for(obj: Any) -> Any:
    """The view of ``obj``, or None when TileLab has none for its type.

    A :class:`~tilelab.records.KernelRecord` shows as its Explorer, a
    :class:`~tilelab.tune.result.TuneResult` as its tuning view, a
    :class:`~tilelab.runs.SinceLastRun` and a :class:`~tilelab.recompiled.WhyRecompiled`
    as their one-line views; a view (``tilelab.compare(a, b)``, ...) is its own view.
    """
    return None


view_for.register(KernelRecord, record_view)
view_for.register(TuneResult, TuningView)
view_for.register(SinceLastRun, SinceLastRunView)
view_for.register(WhyRecompiled, WhyView)


@view_for.register(BundleView)
@view_for.register(SinceLastRunView)
@view_for.register(WhyView)
def _itself(view: Any) -> Any:
    return view


def viewed_types() -> tuple[type, ...]:
    """The types :func:`view_for` maps to a view (views themselves left out: they show as they are)."""
    return tuple(cls for cls, make in view_for.registry.items() if cls is not object and make is not _itself)
