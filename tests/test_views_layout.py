"""Layout figures and bank maps: plotly trace data checked against the record's tables."""

from __future__ import annotations

import numpy as np
import pytest
from sample_records import fragment_layout, sample_record, shared_layout

from tilelab.records import LayoutKind, LayoutRecord
from tilelab.views.banks import bank_conflicts, bank_map
from tilelab.views.layout import layout_figure, layout_matplotlib
from tilelab.views.layout_view import LayoutsWidget


def test_a_fragment_figure_colours_each_cell_by_its_thread_and_hovers_all_its_facts():
    layout = fragment_layout()

    (trace,) = layout.plot().data

    np.testing.assert_array_equal(trace.z, layout.thread[0])
    custom = np.asarray(trace.customdata)
    np.testing.assert_array_equal(custom[..., 0], layout.thread[0])
    np.testing.assert_array_equal(custom[..., 1], layout.thread[0] // 32)
    np.testing.assert_array_equal(custom[..., 2], layout.local_index[0])
    assert (custom[..., 3] == 0).all()
    for word in ("row", "col", "thread", "warp", "local index", "replica"):
        assert word in trace.hovertemplate


def test_small_tiles_carry_thread_and_local_labels():
    layout = fragment_layout()

    (trace,) = layout_figure(layout).data

    assert trace.text[1][5] == f"T{layout.thread[0, 1, 5]}/L{layout.local_index[0, 1, 5]}"


def test_large_tiles_have_no_labels():
    shape = (64, 64)
    thread = (np.arange(64 * 64).reshape(1, *shape) // 32) % 128
    layout = LayoutRecord(
        "big", "local.fragment", shape, "float32", LayoutKind.FRAGMENT, "", 128, 1, thread, thread % 32
    )

    (trace,) = layout_figure(layout).data

    assert trace.text is None


@pytest.mark.parametrize(
    ("color", "table"), [("warp", lambda lay: lay.thread[0] // 32), ("local", lambda lay: lay.local_index[0])]
)
def test_cells_can_be_coloured_by_warp_or_local_index(color, table):
    layout = fragment_layout()

    (trace,) = layout_figure(layout, color=color).data

    np.testing.assert_array_equal(trace.z, table(layout))


def test_the_warp_filter_blanks_every_element_of_the_other_warps():
    layout = fragment_layout()

    (trace,) = layout_figure(layout, warp=1).data

    z = np.asarray(trace.z, dtype=float)
    other = layout.thread[0] // 32 != 1
    assert np.isnan(z[other]).all()
    np.testing.assert_array_equal(z[~other], layout.thread[0][~other])
    assert (np.asarray(trace.text)[other] == "").all()


def test_a_replicated_fragment_shows_the_chosen_replica():
    layout = fragment_layout(replicas=2)

    (trace,) = layout_figure(layout, replica=1).data

    np.testing.assert_array_equal(trace.z, layout.thread[1])
    assert (np.asarray(trace.customdata)[..., 3] == 1).all()


def test_the_bank_map_of_a_swizzled_shared_buffer_follows_its_offsets():
    layout = shared_layout(swizzled=True)

    banks = bank_map(layout)

    np.testing.assert_array_equal(banks, (layout.offset * 2 // 4) % 32)
    assert sorted(set(banks[:, 0])) == list(range(0, 32, 4))  # rows of column 0 spread over 8 banks


def test_the_swizzle_figure_shows_offsets_and_banks_with_the_conflict_count():
    layout = shared_layout(swizzled=True)

    figure = layout_figure(layout)

    offset, banks = figure.data
    np.testing.assert_array_equal(offset.z, layout.offset)
    np.testing.assert_array_equal(banks.z, bank_map(layout))
    assert "conflict-free" in figure.layout.title.text


def test_swizzling_removes_the_bank_conflicts_of_a_column_wise_warp_access():
    plain, swizzled = shared_layout(swizzled=False), shared_layout(swizzled=True)

    assert bank_conflicts(plain, "row").extra_wavefronts == 0
    assert bank_conflicts(swizzled, "row").extra_wavefronts == 0
    column = bank_conflicts(plain, "column")
    assert (column.requests, column.wavefronts, column.worst) == (8, 64, 8)
    assert bank_conflicts(swizzled, "column").conflict_free


def test_layouts_with_leading_dimensions_show_one_tile_at_a_time():
    base = shared_layout(swizzled=True)
    stacked = LayoutRecord(
        "S", "shared", (2, 8, 64), "float16", LayoutKind.SHARED, "", offset=np.stack([base.offset, base.offset + 512])
    )

    offset, _ = layout_figure(stacked, index=1).data

    np.testing.assert_array_equal(offset.z, base.offset + 512)


def test_to_matplotlib_draws_the_same_table():
    layout = fragment_layout()

    figure = layout.to_matplotlib()

    image = figure.axes[0].images[0]
    np.testing.assert_array_equal(image.get_array(), layout.thread[0])
    assert len(layout_matplotlib(shared_layout(swizzled=True)).axes) == 4  # two maps and their colour bars


def test_the_layouts_tab_builds_its_figure_only_when_shown_and_redraws_on_controls():
    widget = LayoutsWidget(sample_record())

    assert widget.figure is None and widget.buffer.value == "C_local"
    widget.show()
    first = widget.plot.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    widget.color.value = "warp"
    widget.buffer.value = "A_shared"

    assert first["data"][0]["type"] == "heatmap"
    assert len(widget.figure.data) == 2 and "A_shared" in widget.plot.outputs[0]["data"]["text/plain"]
    assert widget.warp.layout.display == "none"
