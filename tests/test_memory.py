"""A long session stays small: showing a record again, and running many cells, keeps bounded state.

Showing one Explorer builds ~30 widgets; before superseded trees were closed,
60 showings of one GEMM record kept all ~1,800 widgets and their snapshots
(+34 to +36 MB in this process, +40 MB in a real kernel; now about +4 MB).
"""

from __future__ import annotations

import gc
import linecache

import ipywidgets
from sample_records import gemm_record, sample_record

from tilelab.magic import TileLangMagics
from tilelab.registry import LIMIT
from tilelab.views import record_view
from tilelab.views._live import live_views


def rss_mb() -> float:
    """This process's resident set size (``VmRSS``), after a full collection."""
    gc.collect()
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def live_widgets() -> int:
    return len(ipywidgets.Widget.widgets)


def test_showing_one_gemm_explorer_60_times_grows_rss_by_at_most_30_mb(ip):
    record = gemm_record()
    ip.display_formatter.format(record)  # warm up: imports, pygments, first snapshot
    before = rss_mb()

    for _ in range(60):
        ip.display_formatter.format(record)  # what displaying it in a notebook does

    grown = rss_mb() - before
    assert grown <= 30, f"RSS grew by {grown:.1f} MB over 60 showings"


def test_showing_a_record_again_closes_the_widgets_of_its_previous_showing():
    record = sample_record()
    first = record_view(record)
    first._repr_mimebundle_()
    widgets_after_one = live_widgets()

    for _ in range(20):
        record_view(record)._repr_mimebundle_()

    assert live_widgets() == widgets_after_one
    assert first._widget.comm is None and first._core.comm is None  # the first tree was closed


def test_a_superseded_view_shown_again_builds_a_live_tree():
    record = sample_record()
    first, second = record_view(record), record_view(record)
    first._repr_mimebundle_()
    old_tree, old_id = first._widget, first._widget.model_id
    second._repr_mimebundle_()

    bundle = first._repr_mimebundle_()

    assert old_tree.comm is None and second._widget.comm is None
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == first._widget.model_id != old_id


def test_distinct_records_keep_at_most_the_live_limit_of_trees():
    views = live_views()
    limit, views.limit = views.limit, 3
    try:
        shown = [record_view(sample_record(name=f"k{i}")) for i in range(5)]
        for view in shown:
            view._repr_mimebundle_()

        assert len(views) == 3
        assert [view._widget.comm is None for view in shown] == [True, True, False, False, False]
    finally:
        views.limit = limit


def test_300_distinct_cells_keep_the_cell_cache_and_linecache_bounded(ip):
    magics = TileLangMagics(ip)  # its own cache: the session's magic keeps its cached cells

    files = []
    for i in range(300):
        files.append(magics._compile_cell(f"x_{i} = {i}\n")[1])
        magics._cache[f"key {i}"] = None

    assert len(magics._cache) <= LIMIT
    assert len([name for name in files if name in linecache.cache]) <= LIMIT
    assert linecache.getlines(files[-1]) == ["x_299 = 299\n"]  # the newest cell can still be read
    assert "key 299" in magics._cache and "key 0" not in magics._cache


def test_a_cell_run_again_stays_in_linecache_while_others_come_and_go(ip):
    magics = TileLangMagics(ip)
    _code, kept = magics._compile_cell("kept = 1\n")
    _code, dropped = magics._compile_cell("dropped = 1\n")

    for i in range(LIMIT + 10):
        magics._compile_cell(f"y_{i} = {i}\n")
        if i % 100 == 0:
            magics._compile_cell("kept = 1\n")

    assert linecache.getlines(kept) == ["kept = 1\n"]
    assert linecache.getlines(dropped) == []
