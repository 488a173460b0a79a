"""Views: renderings of records (live widgets plus static HTML snapshots).

Views only read records. Every view returns an object whose
``_repr_mimebundle_`` carries the live widget, a self-contained static
``text/html`` snapshot and a short ``text/plain``. Importing this package is
cheap: ipywidgets, anywidget and plotly are imported where they are used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["record_view"]


def record_view(record: Any):
    """The Explorer of ``record`` (tabs Overview · Passes · Source · Layouts).

    Parameters
    ----------
    record
        A :class:`~tilelab.records.KernelRecord`, successful or failed.
    """
    from tilelab.views.explorer import ExplorerView

    return ExplorerView(record)
