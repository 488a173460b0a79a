"""The Explorer: mime bundle, tabs, requests answered from the kernel, static snapshot (well-formed, escaped, small)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from htmlcheck import foreign_images, parse
from sample_records import EVIL, IR_LAYOUT, failed_record, gemm_record, sample_record

from tilelab.views import record_view, widgets
from tilelab.views._bundle import WIDGET_MIME
from tilelab.views.explorer import TABS, ExplorerView
from tilelab.views.overview.snapshot import overview_snapshot
from tilelab.views.widgets import ExplorerWidget

WIDGET_SOURCES = Path(__file__).parents[1] / "src" / "widgets"


def _state(widget) -> str:
    return str({k: v for k, v in widget.get_state().items() if k not in ("_esm", "_css")})


def test_record_view_returns_the_live_widget_a_static_snapshot_and_short_text():
    view = record_view(sample_record())

    bundle = view._repr_mimebundle_()

    assert bundle[WIDGET_MIME]["model_id"] == view.widget.model_id
    assert "data-tilelab='explorer'" in bundle["text/html"]
    assert bundle["text/plain"].startswith("<TileLab Explorer gemm") and len(bundle["text/plain"]) < 200


def test_the_explorer_is_one_widget_with_five_tabs_in_order_the_layouts_among_them():
    view = ExplorerView(sample_record())

    root = view.widget

    assert [tab["title"] for tab in view.core.tabs] == list(TABS) == ["Overview", "Passes", "Source", "Layouts", "Machine code"]
    assert root is view.core and isinstance(root, ExplorerWidget) and "tilelab-explorer" in root.get_state()["_dom_classes"]
    view.select("Layouts")
    assert view.core.tab == "layouts"


def test_an_unknown_tab_is_refused_with_the_tabs_there_are():
    view = ExplorerView(sample_record())

    with pytest.raises(ValueError, match="Overview"):
        view.select("Assembly")


def test_synced_state_is_small_and_carries_no_ir_or_source_text():
    view = ExplorerView(sample_record())

    state = _state(view.core)

    assert "alloc(128)" not in state and "__global__" not in state and "T.gemm" not in state
    assert len(state) < 4000


def test_the_kernel_answers_the_browsers_requests_with_their_id():
    core = ExplorerView(sample_record()).core

    diff = core.answer({"id": 7, "type": "diff", "index": 2})
    source = core.answer({"id": 8, "type": "source"})
    overview = core.answer({"id": 9, "type": "overview"})

    assert (diff["id"], diff["type"], diff["after"]) == (7, "diff", IR_LAYOUT)
    assert source["id"] == 8 and len(source["panes"]) == 2
    assert overview["rows"][0] == {"label": "kernel", "text": "gemm", "kind": "", "note": ""}


def test_a_bad_request_gets_one_line_back_not_a_traceback():
    core = ExplorerView(sample_record()).core

    assert core.answer({"id": 1, "type": "diff", "index": 99})["error"].startswith("no pass with index 99")
    assert "cannot answer" in core.answer({"id": 2, "type": "assemble"})["error"]
    assert "not a valid regular expression" in core.answer({"id": 3, "type": "search", "query": "(", "regex": True})["error"]


def test_replies_go_back_over_the_widgets_comm():
    core = ExplorerView(sample_record()).core
    sent = []
    core.send = sent.append

    core._handle_custom_msg({"id": 4, "type": "ir", "index": 3}, [])

    assert [(m["id"], m["text"]) for m in sent] == [(4, IR_LAYOUT)]


def test_select_pass_shows_the_passes_tab_with_that_pass():
    view = ExplorerView(sample_record())

    view.select_pass("tl.LayoutInference", base=0)

    assert (view.core.tab, view.core.pass_index, view.core.base_index) == ("passes", 2, 0)
    with pytest.raises(ValueError, match="no pass with index 42"):
        view.select_pass(42)


def test_without_a_built_bundle_the_view_says_how_to_build_it_and_shows_the_snapshot(monkeypatch, tmp_path):
    monkeypatch.setattr(widgets, "BUNDLE", tmp_path / "explorer.js")

    bundle = record_view(sample_record())._repr_mimebundle_()

    assert WIDGET_MIME not in bundle
    (notice,) = parse(bundle["text/html"]).find_all("p", data_tilelab="no-bundle")
    assert "make setup" in notice.all_text() and "npm run build:prod" in notice.all_text()
    assert "data-tilelab='explorer'" in bundle["text/html"]


def test_the_snapshot_is_well_formed_and_has_every_section():
    tree = parse(ExplorerView(sample_record()).to_html())

    sections = [node.attrs["data-section"] for node in tree.find_all("details") if "data-section" in node.attrs]
    assert sections == ["overview", "passes", "source", "layouts"]
    assert len(tree.find_all("pre", data_tilelab="diff")) == 2  # the two changed passes after the first
    assert not tree.find_all("script")


def test_a_hostile_kernel_name_and_comments_render_inert():
    record = sample_record(evil=True)
    view = ExplorerView(record)

    tree = parse(view.to_html())
    overview = parse(overview_snapshot(view.core.answer({"id": 1, "type": "overview"})))

    assert not foreign_images(tree) and not foreign_images(overview)
    assert not tree.find_all("script")
    assert EVIL in tree.all_text() and EVIL in overview.all_text()


def test_the_widgets_front_end_sets_user_text_only_as_text():
    for script in WIDGET_SOURCES.glob("*.ts"):
        text = script.read_text()
        assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write", text), script.name


def test_a_failed_record_shows_its_error_with_the_line_and_the_passes_that_ran():
    view = record_view(failed_record())

    bundle = view._repr_mimebundle_()
    tree = parse(bundle["text/html"])

    (error,) = tree.find_all("div", data_tilelab="error")
    assert "line 7" in error.all_text() and "too small" in error.all_text()
    assert "failed: buffer A_shared is too small" in bundle["text/plain"]
    assert len(view.core.passes["rows"]) == 2
    assert view.core.answer({"id": 1, "type": "source"})["panes"] == []


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
def test_a_saved_sm90_gemm_explorer_output_is_at_most_250_kb():
    record = gemm_record("sm_90")

    bundle = ExplorerView(record)._repr_mimebundle_()

    assert len(record.passes) >= 80
    saved = len(bundle["text/html"].encode()) + len(bundle["text/plain"].encode())
    assert saved <= 250_000, f"the saved output is {saved / 1000:.0f} kB"
    parse(bundle["text/html"])
