"""The Layouts tab: one data dict (facts, tiles, palette, wrapping), its snapshot and the widget's answers,
figures and banks."""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from htmlcheck import charts, parse
from sample_records import fragment_layout, sample_record, shared_layout

import tilelab
from tilelab.records import LayoutKind, LayoutRecord
from tilelab.views.explorer import ExplorerView
from tilelab.views.html import sanitiser_proof
from tilelab.views.layouts import (
    bank_conflicts,
    bank_map,
    layout_figure,
    layout_matplotlib,
    layouts_data,
    layouts_snapshot,
)
from tilelab.views.layouts import snapshot as snapshot_module
from tilelab.views.layouts.data import layout_entry, layout_tile
from tilelab.views.layouts.plots import THEME
from tilelab.views.layouts.snapshot import bands
from tilelab.views.layouts.tables import fragment_grid, thread_range

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


def snapshot_of(layout: LayoutRecord) -> str:
    """The snapshot of a record holding only ``layout``."""
    return layouts_snapshot(layouts_data(replace(sample_record(), layouts={layout.buffer: layout})))


def table(tile: dict, name: str) -> np.ndarray:
    return np.asarray(tile[name]).reshape(tile["rows"], tile["cols"])


def ask(view: ExplorerView, kind: str, **content) -> dict:
    """The Explorer widget's answer to a request, without the request's id and type."""
    reply = view.core.answer({"id": 1, "type": kind, **content})
    return {key: value for key, value in reply.items() if key not in ("id", "type")}


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


def test_wide_tiles_wrap_into_bands_a_multiple_of_the_alignment_wide():
    assert bands(1024, 300, 8) == [(0, 296), (296, 592), (592, 888), (888, 1024)]
    assert bands(100, 6, 8) == [(start, min(100, start + 4)) for start in range(0, 100, 4)]  # narrower: a power of two
    assert bands(128, 128, 8) == [(0, 128)]


def test_entries_carry_plain_json_facts_and_the_first_tile():
    entries = {entry["name"]: entry for entry in layouts_data(sample_record())["layouts"]}
    consumer = layout_entry("C", consumer_fragment())

    assert consumer["threads"] == [128, 192] and consumer["rows"] == 8 and consumer["cols"] == 16
    assert "threadIdx.x 128–191" in consumer["summary"] and "warps 4–5" in consumer["summary"]
    assert entries["A_shared"]["threads"] is None and "conflict-free" in entries["A_shared"]["summary"]
    assert (consumer["tile"]["replica"], consumer["tile"]["tile"]) == (0, 0)
    facts = [value for entry in entries.values() for key, value in entry.items() if key != "tile"]
    assert all(isinstance(value, (str, int, list, bool, type(None))) for value in facts)


# -- one data dict, two renderings ---------------------------------------------------
def test_the_snapshot_is_rendered_from_the_data_dict_alone():
    record = sample_record(evil=True)
    data = layouts_data(record)

    roundtripped = json.loads(json.dumps(data))

    assert roundtripped == data
    section = tilelab.to_html(record).split("data-section='layouts'", 1)[1]
    assert sanitiser_proof(layouts_snapshot(roundtripped)) in section


def test_the_snapshot_module_imports_nothing_from_the_records():
    tree = ast.parse(Path(snapshot_module.__file__).read_text())

    modules = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    modules += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]

    assert modules and not [name for name in modules if name.startswith("tilelab.records")]


def test_the_explorer_widget_receives_the_same_dict():
    record = sample_record()
    view = ExplorerView(record)

    answer = ask(view, "layouts")

    assert answer == layouts_data(record)
    assert [spec["kind"] for spec in view.core.tabs if spec["id"] == "layouts"] == ["layouts"]


def test_the_snapshot_colours_cells_from_the_palette_it_is_given():
    data = layouts_data(replace(sample_record(), layouts={"C": consumer_fragment()}))
    data["palette"]["hues"] = [0] * 12  # every warp red

    (grid,) = parse(layouts_snapshot(data)).find_all("table", data_tilelab="fragment-table")

    assert grid.find_all("td")[0].attrs["bgcolor"] == "#eeb5b5"  # hsl(0, 62%, 82%)


# -- tiles on request ----------------------------------------------------------------
def test_a_fragment_tile_travels_as_absolute_threads_and_locals():
    layout = consumer_fragment()

    tile = layout_tile(layout)

    assert (tile["rows"], tile["cols"]) == (8, 16) and set(tile) >= {"thread", "local"}
    np.testing.assert_array_equal(table(tile, "thread"), layout.thread[0] + 128)
    np.testing.assert_array_equal(table(tile, "local"), layout.local_index[0])


def test_a_shared_tile_travels_as_offsets_and_banks():
    layout = shared_layout(swizzled=True)

    tile = layout_tile(layout)

    np.testing.assert_array_equal(table(tile, "offset"), layout.offset)
    np.testing.assert_array_equal(table(tile, "bank"), bank_map(layout))


def test_the_explorer_answers_a_tile_request_with_the_chosen_replica():
    view = ExplorerView(replace(sample_record(), layouts={"C": fragment_layout(replicas=2)}))

    answer = ask(view, "layout_tile", name="C", replica=1, tile=0)

    assert answer["name"] == "C" and answer["replica"] == 1 and "error" not in answer
    np.testing.assert_array_equal(table(answer, "thread"), fragment_layout(replicas=2).thread[1])


@pytest.mark.parametrize(
    ("request_", "problem"),
    [
        ({"name": "nope"}, "no layout called 'nope'"),
        ({"name": "C_local", "replica": 3}, "replica 3 out of range"),
        ({"name": "C_local", "tile": "0"}, "must be integers"),
    ],
)
def test_a_bad_tile_request_gets_an_error_message(request_, problem):
    view = ExplorerView(sample_record())

    answer = ask(view, "layout_tile", **request_)

    assert problem in answer["error"]


def test_the_layouts_travel_on_request_not_in_synced_state():
    view = ExplorerView(sample_record())

    state = json.dumps({k: v for k, v in view.core.get_state().items() if k not in ("_esm", "_css")}, default=str)

    assert view.core.layout_buffer == "" and "Fragment(8x16)" not in state and "row-major" not in state
    assert "conflict-free" not in state  # the layouts' facts come with the tab's data


# -- the snapshot --------------------------------------------------------------------
def test_the_snapshot_labels_cells_with_absolute_threads_and_local_registers():
    tree = parse(snapshot_of(consumer_fragment()))

    (grid,) = tree.find_all("table", data_tilelab="fragment-table")
    cells = [td.all_text() for td in grid.find_all("td")]
    assert cells[0] == "T128/L0" and cells[2] == "T129/L0"
    legend = tree.find_all("div", data_tilelab="warp-legend")[0].all_text()
    assert "warp 4 · T128–T159" in legend and "warp 5 · T160–T191" in legend


def test_the_warp_map_merges_each_warps_rows_into_one_rect():
    thread = (np.arange(64)[:, None] // 16 * 32 + np.zeros(32, dtype=int))[None]  # rows 0-15 warp 0, 16-31 warp 1...
    layout = fragment("C", thread, thread * 0)

    (warp_map,) = charts(parse(snapshot_of(layout)))

    rects = warp_map.find_all("rect")
    assert len(rects) == 4 and {r.attrs["y"] for r in rects} == {"0", "64", "128", "192"}
    tips = [tip.attrs["title"] for tip in parse(snapshot_of(layout)).find_all("div", **{"class": "tl-chart-tip"})]
    assert tips[1] == "warp 1 · T32–T63: rows 16–31, columns 0–31"  # an image shows no <title>: hover boxes say it
    assert len(tips) == 4


def test_a_4x1024_fragment_wraps_into_bands_in_the_snapshot():
    markup = snapshot_of(wide_fragment())
    tree = parse(markup)

    tables = tree.find_all("table", data_tilelab="fragment-table")
    (warp_map,) = charts(tree)
    assert len(tables) == 4  # 4 rows x 64 columns labelled, 16 columns a band
    assert [len(t.find_all("td")) for t in tables] == [64] * 4
    assert tables[1].find_all("th")[1].all_text() == "16"
    assert int(warp_map.attrs["width"]) <= 512 and int(warp_map.attrs["height"]) >= 4 * 4 * 4
    assert "<script" not in markup and len(markup) < 30_000


def test_the_warp_map_stays_small_when_warps_alternate_every_element():
    i, j = np.indices((128, 128))
    thread = (((i + j) % 2) * 32)[None]  # a checkerboard of two warps: nothing merges
    layout = fragment("X", thread, thread * 0)

    markup = snapshot_of(layout)

    (warp_map,) = charts(parse(markup))
    assert 256 < len(warp_map.find_all("rect")) <= 2048 and "of 128 rows" in markup
    assert "tl-chart-tip" not in markup  # a tooltip a cell would weigh more than the map: the legend names the warps


def test_a_layout_without_tables_says_so_in_the_snapshot():
    layout = LayoutRecord("B", "shared", (4096, 4096), "float16", LayoutKind.SHARED, "too big")

    entry = layout_entry("B", layout)

    assert entry["tile"] is None and entry["table"] is False
    assert "No element table" in snapshot_of(layout)


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

    tile = layout_tile(stacked, index=1)

    np.testing.assert_array_equal(table(tile, "offset"), base.offset + 512)
    assert layout_entry("S", stacked)["tiles"] == 2
