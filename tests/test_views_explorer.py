"""The Explorer: mime bundle, static snapshot (well-formed, escaped), failed records, payload size."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from htmlcheck import parse
from sample_records import EVIL, failed_record, gemm_record, sample_record

from tilelab.views import record_view
from tilelab.views._bundle import WIDGET_MIME, state_bytes
from tilelab.views.explorer import TABS, ExplorerView

ASSETS = Path(__file__).parents[1] / "tilelab" / "views" / "assets"


def test_record_view_returns_the_live_widget_a_static_snapshot_and_short_text():
    view = record_view(sample_record())

    bundle = view._repr_mimebundle_()

    assert bundle[WIDGET_MIME]["model_id"] == view.widget.model_id
    assert "data-tilelab='explorer'" in bundle["text/html"]
    assert bundle["text/plain"].startswith("<TileLab Explorer gemm") and len(bundle["text/plain"]) < 200


def test_a_record_displays_itself_as_its_explorer():
    bundle = sample_record()._repr_mimebundle_()

    assert set(bundle) == {WIDGET_MIME, "text/html", "text/plain"}


def test_the_explorer_has_four_tabs_in_order():
    view = ExplorerView(sample_record())

    assert tuple(view.tabs.titles) == TABS
    assert [type(child).__name__ for child in view.tabs.children] == [
        "HTML",
        "PassesWidget",
        "SourceWidget",
        "LayoutsWidget",
    ]


def test_the_snapshot_is_well_formed_and_has_every_section():
    tree = parse(ExplorerView(sample_record()).to_html())

    sections = [node.attrs["data-section"] for node in tree.find_all("details") if "data-section" in node.attrs]
    assert sections == ["overview", "passes", "source", "layouts"]
    assert len(tree.find_all("table", data_tilelab="diff")) == 2  # the two changed passes after the first
    assert tree.find_all("table", data_tilelab="bank-table")
    assert tree.find_all("table", data_tilelab="fragment-table")
    assert not tree.find_all("script")


def test_a_hostile_kernel_name_and_comments_render_inert():
    record = sample_record(evil=True)
    view = ExplorerView(record)

    tree = parse(view.to_html())
    overview = parse(view.tabs.children[0].value)

    assert not tree.find_all("img") and not overview.find_all("img")
    assert not tree.find_all("script")
    assert EVIL in tree.all_text()  # shown as text, not markup
    assert EVIL in overview.all_text()


def test_widget_scripts_set_user_text_only_as_text():
    for script in ASSETS.glob("*.js"):
        text = script.read_text()
        assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write", text), script.name


def test_a_failed_record_shows_its_error_with_the_line_and_the_passes_that_ran():
    view = record_view(failed_record())

    bundle = view._repr_mimebundle_()
    tree = parse(bundle["text/html"])

    (error,) = tree.find_all("div", data_tilelab="error")
    assert "line 7" in error.all_text() and "too small" in error.all_text()
    assert "failed: buffer A_shared is too small" in bundle["text/plain"]
    assert len(view.passes.passes) == 2
    assert "No layouts" in view.layouts.children[0].value


def test_the_layouts_tab_builds_its_figure_when_selected():
    view = ExplorerView(sample_record())
    assert view.widget.children[3].figure is None

    view.select("Layouts")

    assert view.layouts.figure is not None


def test_repr_is_cheap_and_builds_no_widget():
    view = ExplorerView(sample_record())

    assert repr(view).startswith("<TileLab Explorer gemm")
    assert view._widget is None


def test_a_failure_inside_the_repr_warns_before_raising(monkeypatch):
    view = ExplorerView(sample_record())
    monkeypatch.setattr(view, "_build_html", lambda: 1 / 0)

    with pytest.warns(UserWarning, match="could not render ExplorerView"), pytest.raises(ZeroDivisionError):
        view._repr_mimebundle_()


@pytest.mark.slow
def test_the_gemm_explorer_state_and_snapshot_fit_in_two_megabytes():
    record = gemm_record("sm_90")
    view = ExplorerView(record)

    bundle = view._repr_mimebundle_()

    assert len(record.passes) > 60
    assert state_bytes(view.widget) + len(bundle["text/html"].encode()) <= 2_000_000
    parse(bundle["text/html"])
