"""Layouts: data shaping (absolute thread ids, wrapping), the live grid's payloads, the snapshot, figures and banks."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from htmlcheck import parse
from sample_records import fragment_layout, sample_record, shared_layout

from tilelab.records import LayoutKind, LayoutRecord
from tilelab.views.banks import bank_conflicts, bank_map
from tilelab.views.layout import bands, fragment_grid, grid_payload, layout_entries, thread_range
from tilelab.views.layout_html import layout_html
from tilelab.views.layout_plots import THEME, layout_figure, layout_matplotlib
from tilelab.views.layout_view import LayoutsWidget

SM90_DESCRIPTION = (
    "Fragment((8, 16) -> (2,), replicate: 1, thread: 64, forward_thread: ..., forward_index: (...), "
    "thread_range: I.Range(128, 192))"
)


def consumer_fragment() -> LayoutRecord:
    """The sample fragment as an sm_90 consumer warpgroup sees it: TileLang's threads 0..63 are threadIdx.x 128..191."""
    return replace(fragment_layout(), description=SM90_DESCRIPTION)


def wide_fragment(rows: int = 4, cols: int = 1024) -> LayoutRecord:
    """A ``rows`` x ``cols`` fragment over 128 threads, four consecutive columns per thread (TileLang's row copy)."""
    j = np.arange(cols)
    thread = np.broadcast_to((j % 512) // 4, (rows, cols))[None]
    local = (np.arange(rows)[:, None] * 8 + (j // 512) * 4 + j % 4)[None]
    return fragment("A_local", thread, local)


def fragment(name: str, thread: np.ndarray, local: np.ndarray) -> LayoutRecord:
    """A fragment over 128 threads with these (replicas, rows, cols) tables."""
    shape = tuple(thread.shape[1:])
    return LayoutRecord(name, "local.fragment", shape, "float32", LayoutKind.FRAGMENT, "", 128, 1, thread, local)


def decode(buffer: bytes, rows: int, cols: int) -> np.ndarray:
    return np.frombuffer(buffer, dtype="<i4").reshape(rows, cols)


# -- shaping -------------------------------------------------------------------------
def test_thread_ids_are_absolute_on_an_sm90_consumer_fragment():
    layout = consumer_fragment()

    grid = fragment_grid(layout)

    assert thread_range(layout) == (128, 192)
    np.testing.assert_array_equal(grid["thread"], layout.thread[0] + 128)
    assert grid["thread"][0, 0] == 128 and grid["warp"][0, 0] == 4 and grid["lane"][0, 2] == 1


def test_a_fragment_without_a_thread_range_starts_at_thread_zero():
    layout = fragment_layout()

    assert thread_range(layout) == (0, 64)
    np.testing.assert_array_equal(fragment_grid(layout)["thread"], layout.thread[0])


def test_wide_tiles_wrap_into_power_of_two_bands():
    assert bands(1024, 300) == [(0, 256), (256, 512), (512, 768), (768, 1024)]
    assert bands(100, 64) == [(0, 64), (64, 100)]
    assert bands(128, 128) == [(0, 128)]


def test_entries_carry_facts_but_no_tables():
    entries = {entry["name"]: entry for entry in layout_entries({"C": consumer_fragment(), "S": shared_layout(True)})}

    assert entries["C"]["threads"] == [128, 192] and entries["C"]["rows"] == 8 and entries["C"]["cols"] == 16
    assert "threadIdx.x 128–191" in entries["C"]["summary"] and "warps 4–5" in entries["C"]["summary"]
    assert entries["S"]["threads"] is None and "conflict-free" in entries["S"]["summary"]
    values = [value for entry in entries.values() for value in entry.values()]
    assert all(isinstance(value, (str, int, list, bool, type(None))) for value in values)


# -- the live grid -------------------------------------------------------------------
def test_a_fragment_tile_travels_as_absolute_threads_and_locals():
    layout = consumer_fragment()

    meta, (thread, local) = grid_payload(layout)

    assert (meta["rows"], meta["cols"], meta["kind"]) == (8, 16, "fragment")
    np.testing.assert_array_equal(decode(thread, 8, 16), layout.thread[0] + 128)
    np.testing.assert_array_equal(decode(local, 8, 16), layout.local_index[0])


def test_a_shared_tile_travels_as_offsets_and_banks():
    layout = shared_layout(swizzled=True)

    meta, (offset, bank) = grid_payload(layout)

    np.testing.assert_array_equal(decode(offset, 8, 64), layout.offset)
    np.testing.assert_array_equal(decode(bank, 8, 64), bank_map(layout))
    assert meta["arrays"] == ("offset", "bank")


def test_the_widget_answers_a_grid_request_with_the_chosen_replica():
    widget = LayoutsWidget(replace(sample_record(), layouts={"C": fragment_layout(replicas=2)}))

    message, buffers = widget.reply({"id": 7, "type": "grid", "name": "C", "replica": 1, "tile": 0})

    assert message["type"] == "grid" and message["id"] == 7 and message["replica"] == 1 and "error" not in message
    np.testing.assert_array_equal(decode(buffers[0], 8, 16), fragment_layout(replicas=2).thread[1])


@pytest.mark.parametrize(
    ("request_", "problem"),
    [
        ({"name": "nope"}, "no layout called 'nope'"),
        ({"name": "C_local", "replica": 3}, "replica 3 out of range"),
        ({"name": "C_local", "tile": "0"}, "must be integers"),
    ],
)
def test_a_bad_grid_request_gets_an_error_message(request_, problem):
    widget = LayoutsWidget(sample_record())

    message, buffers = widget.reply({"id": 1, "type": "grid", **request_})

    assert message["id"] == 1 and problem in message["error"] and buffers == []


def test_the_widget_syncs_facts_not_tables():
    widget = LayoutsWidget(sample_record())

    assert widget.selected == "C_local"
    assert [entry["name"] for entry in widget.layouts] == ["C_local", "A_shared", "A_plain"]
    synced = {name: widget.get_state()[name] for name in ("layouts", "palette", "selected")}
    assert len(json.dumps(synced)) < 4_000  # a few facts per layout; tables travel on request


# -- the snapshot --------------------------------------------------------------------
def test_the_snapshot_labels_cells_with_absolute_threads_and_local_registers():
    tree = parse(layout_html(consumer_fragment()))

    (grid,) = tree.find_all("table", data_tilelab="fragment-table")
    cells = [td.all_text() for td in grid.find_all("td")]
    assert cells[0] == "T128/L0" and cells[2] == "T129/L0"
    legend = tree.find_all("div", data_tilelab="warp-legend")[0].all_text()
    assert "warp 4 · T128–T159" in legend and "warp 5 · T160–T191" in legend


def test_the_warp_map_merges_each_warps_rows_into_one_rect():
    thread = (np.arange(64)[:, None] // 16 * 32 + np.zeros(32, dtype=int))[None]  # rows 0-15 warp 0, 16-31 warp 1...
    layout = fragment("C", thread, thread * 0)

    (warp_map,) = parse(layout_html(layout)).find_all("svg", data_tilelab="warp-map")

    rects = warp_map.find_all("rect")
    assert len(rects) == 4 and {r.attrs["y"] for r in rects} == {"0", "64", "128", "192"}


def test_a_4x1024_fragment_wraps_into_bands_in_the_snapshot():
    markup = layout_html(wide_fragment())
    tree = parse(markup)

    tables = tree.find_all("table", data_tilelab="fragment-table")
    (warp_map,) = tree.find_all("svg", data_tilelab="warp-map")
    assert len(tables) == 4  # 4 rows x 64 columns labelled, 16 columns a band
    assert [len(t.find_all("td")) for t in tables] == [64] * 4
    assert tables[1].find_all("th")[1].all_text() == "16"
    assert int(warp_map.attrs["width"]) <= 512 and int(warp_map.attrs["height"]) >= 4 * 4 * 4
    assert "<script" not in markup and len(markup) < 30_000


def test_the_warp_map_stays_small_when_warps_alternate_every_element():
    i, j = np.indices((128, 128))
    thread = (((i + j) % 2) * 32)[None]  # a checkerboard of two warps: nothing merges
    layout = fragment("X", thread, thread * 0)

    markup = layout_html(layout)

    assert markup.count("<rect") <= 2048 and "of 128 rows" in markup


# -- figures -------------------------------------------------------------------------
def test_a_fragment_figure_colours_cells_by_absolute_thread_and_hovers_all_its_facts():
    layout = consumer_fragment()

    (trace,) = layout_figure(layout).data

    np.testing.assert_array_equal(trace.z, layout.thread[0] + 128)
    custom = np.asarray(trace.customdata)
    np.testing.assert_array_equal(custom[..., 1], (layout.thread[0] + 128) // 32)
    np.testing.assert_array_equal(custom[..., 2], layout.local_index[0])
    assert trace.text[1][5] == f"T{layout.thread[0, 1, 5] + 128}/L{layout.local_index[0, 1, 5]}"
    for word in ("row", "col", "thread", "warp", "local index", "replica"):
        assert word in trace.hovertemplate


def test_figures_have_transparent_backgrounds_for_dark_themes():
    figure = layout_figure(shared_layout(swizzled=True))

    assert figure.layout.paper_bgcolor == figure.layout.plot_bgcolor == THEME["paper_bgcolor"] == "rgba(0,0,0,0)"


def test_the_warp_filter_blanks_every_element_of_the_other_warps():
    layout = fragment_layout()

    (trace,) = layout_figure(layout, color="warp", warp=1).data

    z = np.asarray(trace.z, dtype=float)
    other = layout.thread[0] // 32 != 1
    assert np.isnan(z[other]).all() and (z[~other] == 1).all()


def test_the_swizzle_figure_shows_offsets_and_banks_with_the_conflict_count():
    layout = shared_layout(swizzled=True)

    figure = layout_figure(layout)

    offset, banks = figure.data
    np.testing.assert_array_equal(offset.z, layout.offset)
    np.testing.assert_array_equal(banks.z, bank_map(layout))
    assert "conflict-free" in figure.layout.title.text


def test_to_matplotlib_draws_the_same_table():
    layout = fragment_layout()

    image = layout_matplotlib(layout).axes[0].images[0]

    np.testing.assert_array_equal(image.get_array(), layout.thread[0])
    assert len(layout_matplotlib(shared_layout(swizzled=True)).axes) == 4  # two maps and their colour bars


# -- banks ---------------------------------------------------------------------------
def test_the_bank_map_of_a_swizzled_shared_buffer_follows_its_offsets():
    layout = shared_layout(swizzled=True)

    banks = bank_map(layout)

    np.testing.assert_array_equal(banks, (layout.offset * 2 // 4) % 32)
    assert sorted(set(banks[:, 0])) == list(range(0, 32, 4))  # rows of column 0 spread over 8 banks


def test_swizzling_removes_the_bank_conflicts_of_a_column_wise_warp_access():
    plain, swizzled = shared_layout(swizzled=False), shared_layout(swizzled=True)

    assert bank_conflicts(plain, "row").extra_wavefronts == 0
    assert bank_conflicts(swizzled, "row").extra_wavefronts == 0
    column = bank_conflicts(plain, "column")
    assert (column.requests, column.wavefronts, column.worst) == (8, 64, 8)
    assert bank_conflicts(swizzled, "column").conflict_free


def test_layouts_with_leading_dimensions_send_one_tile_at_a_time():
    base = shared_layout(swizzled=True)
    stacked = LayoutRecord(
        "S", "shared", (2, 8, 64), "float16", LayoutKind.SHARED, "", offset=np.stack([base.offset, base.offset + 512])
    )

    _meta, (offset, _bank) = grid_payload(stacked, index=1)

    np.testing.assert_array_equal(decode(offset, 8, 64), base.offset + 512)
    assert layout_entries({"S": stacked})[0]["tiles"] == 2
