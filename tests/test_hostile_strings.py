"""Hostile text (markup, event handlers, template syntax) shows as inert text in every HTML TileLab emits.

Kernel names, comments, IR, config values, error text, warnings, argument
reprs and history rows are all user text: each view must escape them, so a
notebook output (live, saved, nbconvert'ed or sent to the panel) never runs them.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from htmlcheck import assert_inert
from sample_records import failed_record, sample_record

import tilelab
from tilelab._bridge_items import snapshot_html, summary_table
from tilelab.records import ErrorRecord, LineLink
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.tune.space import config_key
from tilelab.tune.store import RunKey, TuningStore
from tilelab.views import record_view
from tilelab.views.overview.snapshot import overview_snapshot
from tilelab.views.tuning import TuningView
from tilelab.views.tuning.snapshot import tuning_html

HOSTILE = ("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "</textarea><svg onload=alert(1)>", "{{7*7}}")
LINE = " ".join(HOSTILE)
ASSETS = Path(tilelab.__file__).parent / "views" / "assets"


def hostile_record():
    """A lowered record with hostile text in every user-derived field."""
    base = sample_record()
    source = base.source
    kernel_file = f"cell{LINE}.py"
    kernel_source = source.kernel_source + f"x = 1  # {LINE}\n"
    links = tuple(
        replace(link, file=kernel_file) if link.file == source.kernel_file else link for link in source.line_links
    )
    links += (LineLink(7, kernel_file, len(kernel_source.splitlines())),)
    layouts = {
        f"{name}{LINE}": replace(layout, buffer=f"{name}{LINE}", description=f"{layout.description} {LINE}")
        for name, layout in base.layouts.items()
    }
    return replace(
        base,
        name=f"gemm{LINE}",
        arguments={"block_M": LINE},
        warnings=(f"careful: {LINE}",),
        device_name=LINE,
        tilelang_version=LINE,
        passes=tuple(replace(p, name=f"{p.name}{LINE}", ir=f"{p.ir}# {LINE}\n") for p in base.passes),
        source=replace(
            source,
            kernel_file=kernel_file,
            kernel_source=kernel_source,
            device=f"{source.device}// {LINE}\n",
            host=f"// {LINE}\n{source.host}",
            line_links=links,
        ),
        layouts=layouts,
    )


def hostile_failed_record():
    return replace(
        failed_record(),
        name=f"broken{LINE}",
        error=ErrorRecord("lower", f"{LINE}\nsecond line", f"<cell{LINE}>", 7, f"Fatal: {LINE}"),
    )


SWEPT = ("block_M", f"block_N{LINE}")
CONFIGS = (
    {"block_M": LINE, SWEPT[1]: 64},
    {"block_M": 64, SWEPT[1]: LINE},
    {"block_M": 64, SWEPT[1]: 64},
)


def hostile_rows(cached: bool = False) -> list[TuneRow]:
    status = (TuneStatus.OK, TuneStatus.COMPILE_ERROR, TuneStatus.OK)
    errors = (None, f"ptxas: {LINE}", None)
    latencies = (0.5, None, 0.7)
    return [
        TuneRow(i, CONFIGS[i], status[i], errors[i], latencies[i], compile_s=1.0, device=LINE, cached=cached)
        for i in range(len(CONFIGS))
    ]


def hostile_result(rows: list[TuneRow] | None = None) -> TuneResult:
    result = TuneResult(f"matmul{LINE}", CONFIGS, SWEPT, LINE)
    for row in hostile_rows() if rows is None else rows:
        result.add(row)
    result.compiled = result.benchmarked = len(result.rows)
    return result


def html_widget_values(widget) -> list[str]:
    """The ``value`` of every ``ipywidgets.HTML`` in the tree under ``widget``."""
    import ipywidgets

    values, seen, stack = [], set(), [widget]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, (ipywidgets.HTML, ipywidgets.HTMLMath)):
            values.append(current.value)
        for name in current.keys:
            value = getattr(current, name)
            items = value if isinstance(value, (list, tuple)) else [value]
            stack += [item for item in items if isinstance(item, ipywidgets.Widget)]
    return values


# -- records -----------------------------------------------------------------------
def test_a_hostile_record_displays_as_inert_text():
    bundle = record_view(hostile_record())._repr_mimebundle_()

    assert_inert(bundle["text/html"], f"gemm{LINE}", f"block_M={LINE}", f"careful: {LINE}", f"# {LINE}", f"// {LINE}")
    assert_inert(bundle["text/html"], f"Python — cell{LINE}.py", f"x = 1  # {LINE}", f"Fragment(8x16) {LINE}")


def test_the_explorer_widgets_html_is_inert():
    view = record_view(hostile_record())
    view.select("Layouts")

    values = [*html_widget_values(view.widget), overview_snapshot(view.core.answer({"id": 1, "type": "overview"}))]

    assert values and any(f"gemm{LINE}" in html.unescape(v) for v in values)
    for value in values:
        assert_inert(value)
    layouts = view.core.answer({"id": 2, "type": "layouts"})["layouts"]
    names = [entry["name"] for entry in layouts]  # data the grid draws as text, never markup
    assert any(LINE in name for name in names)


def test_a_hostile_failed_record_shows_its_error_as_text():
    markup = record_view(hostile_failed_record())._repr_mimebundle_()["text/html"]

    assert_inert(markup, f"broken{LINE}", LINE, f"Fatal: {LINE}", f"<cell{LINE}>")


def test_comparing_hostile_records_is_inert():
    view = tilelab.compare(hostile_record(), sample_record(arch="sm_80"))

    assert_inert(view.to_html(), f"gemm{LINE} sm_90", f"tl.Simplify{LINE}")


def test_the_panel_gets_inert_record_snapshots_and_summaries():
    record = hostile_record()

    assert_inert(snapshot_html(record, "record"), f"gemm{LINE}")
    assert_inert(summary_table(record.summary()), f"gemm{LINE}")


# -- tuning ------------------------------------------------------------------------
def test_hostile_config_values_and_errors_in_the_tuning_snapshot_are_inert():
    markup = TuningView(hostile_result()).to_html()

    assert_inert(markup, f"matmul{LINE}", f"ptxas: {LINE}", f"block_N{LINE}", LINE)


def test_the_tuning_mime_bundle_is_inert():
    pytest.importorskip("plotly")
    bundle = TuningView(hostile_result())._repr_mimebundle_()

    assert_inert(bundle["text/html"], f"ptxas: {LINE}")


def test_the_pivot_styler_escapes_config_values_names_and_caption():
    markup = hostile_result().pivot().to_html()

    assert_inert(markup, f"matmul{LINE}", f"block_N{LINE}", LINE)
    assert len(re.findall(r"<style", markup)) <= 1


def test_the_pivot_table_frame_renders_inert():
    table = hostile_result().pivot_table()

    assert_inert(table.to_html(), LINE)
    assert_inert(table._repr_html_(), LINE)


def test_the_live_tuning_widget_gets_hostile_strings_as_plain_text_and_its_snapshot_keeps_them_inert():
    view = TuningView(hostile_result())

    sent = view.widget.answer({"id": 1, "type": "tuning"})  # what tuning.ts sets as text, never as markup

    texts = json.dumps(sent, ensure_ascii=False)
    assert sent["progress"]["kernel"] == f"matmul{LINE}" and LINE in [row["label"] for row in sent["pivot"]["rows"]]
    assert f"ptxas: {LINE}" in [text for line in sent["rows"]["cells"] for text in line]
    assert "&lt;" not in texts  # not escaped for HTML: the front-end escapes nothing, it only sets text
    assert_inert(tuning_html(sent), f"matmul{LINE}", f"ptxas: {LINE}", f"block_N{LINE}", LINE)


def test_hostile_rows_from_the_sqlite_history_stay_inert(tmp_path):
    pytest.importorskip("plotly")
    store = TuningStore(tmp_path / "history.db")
    key = RunKey.of(f"matmul{LINE}", f"# {LINE}", "{}", '{"kind": "cuda"}', LINE)
    for row in hostile_rows():
        store.write(key, "run-1", row, tilelang_version=LINE)

    measured = store.measured(key)
    result = hostile_result([replace(measured[config_key(c)].row, index=i) for i, c in enumerate(CONFIGS)])
    history = tilelab.tuning_history(db=tmp_path / "history.db")

    assert len(result.rows) == 3 and all(row.cached for row in result.rows.values())
    assert_inert(TuningView(result).to_html(), f"ptxas: {LINE}", LINE)
    assert_inert(TuningView(result)._repr_mimebundle_()["text/html"], f"ptxas: {LINE}")
    assert_inert(result.pivot().to_html(), LINE)
    assert_inert(snapshot_html(result, "tuning"), f"ptxas: {LINE}")
    assert_inert(history.to_html(), f"ptxas: {LINE}", f"matmul{LINE}")
    assert_inert(history._repr_html_(), "ptxas: <script>")  # the notebook's repr cuts long cells


# -- the widgets' front-ends -----------------------------------------------------------
def test_the_widget_front_ends_set_user_text_only_as_text():
    for script in sorted(ASSETS.glob("*.js")):
        code = script.read_text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert sink not in code, f"{script.name} uses {sink}"
