"""The saved Explorer of the quickstart GEMM renders as it did before the views were restructured.

``data/quickstart_gemm.record.json.gz`` is the record of the quickstart notebook's GEMM lowered for
sm_90 (with its machine code); ``data/quickstart_gemm.snapshot.html.gz`` is ``tilelab.to_html`` of it
as of commit 9f5daea, but for three changes made on purpose since: the Machine code section's CUDA lines
with the most SASS name the cell line the record's source map gives each (they named TileLang's ``#line``
directive, ``def gemm`` for the TMA loads) and list a line's classes with equal counts in the class table's
order ("barriers and sync 32, other 32"; it was the order the SASS met them), and the Overview's resources
give the theoretical occupancy as the Machine code card does (12.5%, limited by registers; it said 12%), and
the Layouts section's warp maps are SVG images (``tilelab.views.html.chart``) instead of inline SVG, the same
documents, so that JupyterLab's sanitiser keeps them; and, for that sanitiser too, each inline declaration
naming a theme variable (but the text colour) is preceded by its fallback's (``tilelab.views.html.sanitiser_proof``),
the fallbacks of table borders and of the occupancy bar's track are translucent greys (they were ``#eee``) that
read on a dark page too, the Source section's tints are rgba instead of hsla, and the layout descriptions wrap with
``overflow-wrap:break-word`` (it was ``anywhere``), and each warp map's block has a hover box naming its
warp, threads, rows and columns (an image shows no SVG tooltip), and the Source section's note on machine code
points to the Machine code section the record has (it said "lowered only (no GPU / nvcc here), so no binary exists"),
and the pipeline's barrier set-up (``mbarrier_mem``, its ``init`` block, ``fence_barrier_init`` and the sync after it)
links to the ``T.Pipelined`` line, so the Source section tints those lines and lists them under it, and the
Machine code section's opcode list keeps each opcode with its count when it wraps (``HGMMA&nbsp;8``), and a
block's shared memory reads in KiB beside its bytes where it is a total (``49152 B (48 KiB)`` in the Overview; the
Machine code card leads with the total against the limit, ``50176 B (49 KiB) of 232448 B (227 KiB): 1024 B static + …``),
and the Overview's status of this record, of format 8, which did not say why it was lowered only, reads
``lowered only (not runnable here)`` (it said "no GPU"; a format-9 record says: no GPU, or the GPU's other arch).
When a view changes on purpose, save the snapshot again:
``python tests/test_snapshot_unchanged.py``.
"""

from __future__ import annotations

import difflib
import gzip
from pathlib import Path

import tilelab
from tilelab.records import KernelRecord

DATA = Path(__file__).parent / "data"
RECORD = DATA / "quickstart_gemm.record.json.gz"
SNAPSHOT = DATA / "quickstart_gemm.snapshot.html.gz"


def _read(path: Path) -> str:
    with gzip.open(path, "rt") as file:
        return file.read()


def _render() -> str:
    return tilelab.to_html(KernelRecord.from_json(_read(RECORD)))


def test_the_quickstart_gemm_snapshot_renders_as_before():
    before, now = _read(SNAPSHOT), _render()

    changed = list(difflib.unified_diff(before.split("><"), now.split("><"), "before", "now", n=1, lineterm=""))
    assert now == before, "\n".join(changed[:40])


if __name__ == "__main__":
    with gzip.open(SNAPSHOT, "wt") as file:
        file.write(_render())
