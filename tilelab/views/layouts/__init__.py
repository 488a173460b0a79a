"""The Layouts tab: every layout TileLang inferred for one record, as one data model and two renderings.

- :mod:`~tilelab.views.layouts.data`: :func:`layouts_data` (the only code that shapes the tab's JSON:
  facts, first tiles, palette, wrapping) and the ``layout_tile`` request's answer;
- :mod:`~tilelab.views.layouts.snapshot`: :func:`layouts_snapshot`, script-free HTML from that dict alone;
- ``src/widgets/layouts*.ts``: the live grid, drawn from the same dict inside the Explorer widget;
- :mod:`~tilelab.views.layouts.tables` (a record's element tables as numpy tiles),
  :mod:`~tilelab.views.layouts.banks` (bank maps and conflicts) and :mod:`~tilelab.views.layouts.plots`
  (``LayoutRecord.plot()`` and ``.to_matplotlib()``).
"""

from __future__ import annotations

from tilelab.views.layouts.banks import BankConflicts, bank_conflicts, bank_map
from tilelab.views.layouts.data import layouts_data
from tilelab.views.layouts.plots import layout_figure, layout_matplotlib
from tilelab.views.layouts.snapshot import layouts_snapshot

__all__ = [
    "BankConflicts",
    "bank_conflicts",
    "bank_map",
    "layout_figure",
    "layout_matplotlib",
    "layouts_data",
    "layouts_snapshot",
]
