"""The Source tab: the kernel's Python beside its device code, linked line to line both ways.

:mod:`.data` shapes the tab's JSON from a record (the record's source map, computed at
capture); :mod:`.snapshot` renders that JSON to script-free HTML, and
``src/widgets/source.ts`` renders the same JSON live.
"""

from tilelab.views.source.data import HOW, binary_note, source_data, source_host
from tilelab.views.source.snapshot import source_snapshot

__all__ = ["HOW", "binary_note", "source_data", "source_host", "source_snapshot"]
