"""The tuning view and the result's answers, from results built by hand (no compiles)."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest
from htmlcheck import parse
from tabdata import as_sent

from tilelab.registry import Registry, default_registry
from tilelab.tune.noise import Verdict
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.tune.timeline import Span, Timeline
from tilelab.views import tuning, widgets
from tilelab.views.html import sanitiser_proof
from tilelab.views.tuning import TuningView
from tilelab.views.tuning.colours import PHASE_COLOURS, heat_colour
from tilelab.views.tuning.snapshot import tuning_html

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
VIEW_MIME = "application/vnd.tilelab.view+json"
LATENCY = {(64, 64): 0.9, (64, 128): 0.5, (128, 64): 0.7, (128, 128): None}


def _result(running=False) -> TuneResult:
    configs = tuple({"block_M": m, "block_N": n} for (m, n) in LATENCY)
    result = TuneResult("matmul", configs, ("block_M", "block_N"), "NVIDIA H100", running=running)
    for index, (config, latency) in enumerate(zip(configs, LATENCY.values(), strict=True)):
        status = TuneStatus.OK if latency else TuneStatus.MISMATCH
        error = None if latency else "output 0 differs from the reference (max abs diff 3)"
        result.add(TuneRow(index, config, status, error, latency, compile_s=2.0, bench_s=0.2, device="NVIDIA H100"))
    result.compiled = result.benchmarked = 4
    return result


def _state(view: TuningView) -> str:
    (state,) = parse(view.progress_html()).find_all("span", data_tilelab="tuning-state")
    return state.all_text()


def _asked(view: TuningView) -> dict:
    """What the live widget's front-end gets when it asks for the data (a ``tuning`` request), as it arrives."""
    reply = as_sent(view.widget.answer({"id": 7, "type": "tuning"}))
    assert (reply.pop("id"), reply.pop("type")) == (7, "tuning")
    return reply


def _rebenchmarked_elsewhere() -> TuneResult:
    """The re-benchmark at the end chose block_M=64, block_N=64 (0.9 ms in the sweep), not the sweep's minimum."""
    result = _result()
    result.rows = {**result.rows, 0: replace(result.rows[0], rebench_ms=0.48), 1: replace(result.rows[1], rebench_ms=0.49)}
    result.verdict = Verdict(best=0, runner_up=1, margin_pct=2.0, noise_pct=4.2, tied=(1,))
    return result


def _cell_texts(data: dict) -> list[str]:
    return [cell["text"] for row in data["pivot"]["rows"] for cell in row["cells"] if cell is not None]


def test_best_is_the_fastest_ok_row():
    result = _result()

    assert result.best_config == {"block_M": 64, "block_N": 128}
    assert result.num_errors == 1
    assert repr(result) == "<TuneResult matmul done: 4/4 configs, 1 failed, best 0.5 ms at block_M=64, block_N=128>"


def test_summary_lists_the_run_in_the_registry():
    registry, events = Registry(), []
    registry.subscribe(lambda event, item: events.append((event, item.summary())))
    result = _result(running=True)

    registry.track_tuning(result)

    assert registry.tuning_run(result.id) is result
    event, summary = events[0]
    assert event == "tuning"
    assert summary["total"] == 4 and summary["done"] == 4 and summary["failed"] == 1 and summary["running"]
    assert summary["best_config"] == {"block_M": 64, "block_N": 128} and summary["best_latency_ms"] == 0.5


def test_a_sweep_that_has_not_run_yet_is_not_done():
    result = TuneResult("matmul", ({"block_M": 64}, {"block_M": 128}), ("block_M",), "cpu")

    assert _state(TuningView(result)) == "not started yet"
    result.running = True
    assert _state(TuningView(result)) == "running…"
    result.running, result.partial = False, True
    assert _state(TuningView(result)) == "interrupted (partial)"


def test_the_snapshot_holds_progress_a_heat_map_with_the_minimum_marked_and_the_rows():
    markup = TuningView(_result()).to_html()
    tree = parse(markup)

    assert "<script" not in markup and _state(TuningView(_result())) == "done"
    (pivot,) = tree.find_all("table", data_tilelab="tuning-pivot")
    (best,) = pivot.find_all("td", data_best="true")
    assert best.all_text() == "0.5" and "font-weight:bold" in best.attrs["style"]
    assert [th.all_text() for th in pivot.find_all("th")][1:3] == ["64", "128"]
    assert "max abs diff 3" in tree.find_all("table", data_tilelab="tuning-rows")[0].all_text()


def test_heat_cells_carry_a_text_colour_that_reads_on_their_background():
    for fraction in (0.0, 0.3, 0.6, 1.0):
        background, text = heat_colour(fraction)
        red, green, blue = (int(background[i : i + 2], 16) for i in (1, 3, 5))
        light_cell = 0.2126 * red + 0.7152 * green + 0.0722 * blue > 140
        assert text == ("#111111" if light_cell else "#f6f8fa")
    assert heat_colour(0.0)[1] == "#111111" and heat_colour(1.0)[1] == "#f6f8fa"  # fastest bright, slowest dark


def test_columns_no_row_has_a_value_in_are_hidden_and_the_error_text_comes_after_the_timings():
    header = [th.all_text() for th in parse(TuningView(_result()).rows_html()).find_all("th")]

    assert header[:4] == ["block_M", "block_N", "status", "latency_ms"] and header[-1] == "error"
    assert "compile_s" in header
    for empty in ("tflops", "gbps", "registers", "latency_p90_ms", "rebench_ms", "cached", "trial"):
        assert empty not in header


def test_a_tuning_result_displays_as_its_view_once_tilelab_is_loaded(ip):
    bundle, _ = ip.display_formatter.format(_result())

    assert set(bundle) == {WIDGET_MIME, VIEW_MIME, "text/html", "text/plain"}
    assert bundle["text/plain"].startswith("<TuneResult matmul")


def test_the_live_widget_follows_the_run_through_the_registry_until_it_ends():
    result = _result(running=True)
    view = TuningView(result)
    widget = view.widget
    shown = widget.revision
    assert _asked(view)["progress"]["state"] == "running…" and "0.5" in _cell_texts(_asked(view))

    result.rows.pop(1)
    result.running, result.partial = False, True  # interrupted
    default_registry().track_tuning(result)  # what the sweep does as rows arrive and at its end

    assert widget.revision > shown  # the front-end asks again
    data = _asked(view)
    assert data["progress"]["counts"] == "3/4 configs" and data["progress"]["state"] == "interrupted (partial)"
    assert "0.5" not in _cell_texts(data)
    ended = widget.revision
    default_registry().track_tuning(result)
    assert widget.revision == ended  # the run ended: the view no longer follows it


def test_a_view_shown_before_the_sweep_starts_follows_it_to_the_end():
    result = TuneResult("matmul", ({"block_M": 64}, {"block_M": 128}), ("block_M",), "cpu")
    view = TuningView(result)
    widget = view.widget
    default_registry().track_tuning(result)  # announced before it runs: still listening

    result.running = True
    result.add(TuneRow(0, {"block_M": 64}, TuneStatus.OK, latency_ms=0.5))
    result.add(TuneRow(1, {"block_M": 128}, TuneStatus.OK, latency_ms=0.7))
    result.running = False
    default_registry().track_tuning(result)

    progress = _asked(view)["progress"]
    assert (progress["counts"], progress["state"]) == ("2/2 configs", "done") and widget.revision > 0
    ended = widget.revision
    default_registry().track_tuning(result)
    assert widget.revision == ended


def test_a_sweep_whose_wall_clock_budget_ran_out_is_followed_until_it_stops_running(monkeypatch):
    monkeypatch.setattr(tuning, "_MIN_INTERVAL_S", 0.0)  # every announcement redraws a view that follows the run
    result = _result(running=True)
    result.rows.pop(3)
    view = TuningView(result)
    widget = view.widget

    result.budget_reached = True  # the budget ran out: no config starts, the ones running still end
    default_registry().track_tuning(result)
    assert _asked(view)["progress"]["state"] == "running…"

    result.running = False
    default_registry().track_tuning(result)
    progress = _asked(view)["progress"]
    assert progress["counts"] == "3/4 configs" and progress["coverage"] and progress["state"] != "running…"
    ended = widget.revision
    default_registry().track_tuning(result)
    assert widget.revision == ended  # ended with a config never started: the view no longer follows it


def test_a_finished_run_is_not_followed():
    view = TuningView(_result())
    widget = view.widget

    default_registry().track_tuning(view.result)

    assert widget.revision == 0 and _asked(view)["progress"]["state"] == "done"


def test_pivot_needs_two_swept_parameters():
    result = TuneResult("k", ({"block": 1},), ("block",), "cpu")

    with pytest.raises(ValueError, match="two swept parameters"):
        result.pivot()
    assert TuningView(result).pivot_html() == ""


def _everything() -> TuneResult:
    """A run with a heat map, notes, a verdict, the GPU's state and a timeline."""
    result = _result()
    result.notes = ["2 configs were left out by where="]
    result.verdict = Verdict(best=1, runner_up=2, margin_pct=4.0, noise_pct=0.5, tied=())
    result.gpu_state = {"start": {"sm_clock_mhz": 1980, "temperature_c": 41}, "end": {"sm_clock_mhz": 1755}}
    timeline = result.timeline_record = Timeline(origin=0.0, workers=2)
    timeline.spans = [Span(i, "compiling", 0.5 * i, 0.5 * i + 2.0, f"worker {i % 2 + 1}") for i in range(4)]
    return result


def test_the_heat_map_stars_the_best_config_where_the_re_benchmark_chose_another_than_its_minimum():
    result = _rebenchmarked_elsewhere()  # latency_ms lowest at block_M=64, block_N=128 (0.5 ms)

    pivot = TuningView(result).data()["pivot"]

    assert result.best_config == {"block_M": 64, "block_N": 64}
    assert [[cell and cell["text"] for cell in row["cells"]] for row in pivot["rows"]] == [["0.9 ★", "0.5"], ["0.7", None]]
    assert pivot["rows"][0]["cells"][1]["best"] and pivot["caption"].endswith("★ the best config, chosen by the re-benchmark at the end")
    (drawn,) = parse(tuning_html(as_sent(TuningView(result).data()))).find_all("table", data_tilelab="tuning-pivot")
    assert [td.all_text() for td in drawn.find_all("td") if "★" in td.all_text()] == ["0.9 ★"]


def test_the_pandas_pivot_stars_the_config_the_re_benchmark_chose_like_the_heat_map():
    styler = _rebenchmarked_elsewhere().pivot()

    cells = [td.all_text() for td in parse(styler.to_html()).find_all("td")]
    assert cells == ["0.9000 ★", "0.5000", "0.7000", "—"]
    assert styler.caption.endswith("(minimum highlighted); ★ the best config, chosen by the re-benchmark at the end")
    assert "★" not in _result().pivot().to_html()


def test_without_a_re_benchmark_or_when_it_agrees_the_heat_map_has_no_star():
    agreeing = _result()
    agreeing.rows = {**agreeing.rows, 1: replace(agreeing.rows[1], rebench_ms=0.5)}
    agreeing.verdict = Verdict(best=1, runner_up=2, margin_pct=9.0, noise_pct=0.5, tied=())

    for result in (_result(), agreeing):
        pivot = TuningView(result).data()["pivot"]
        assert "★" not in str(pivot)


def test_the_snapshot_is_rendered_from_the_tab_data_alone():
    view = TuningView(_everything())

    data = as_sent(view.data())  # plain JSON: no NaN, no pandas or numpy values

    assert data == view.data()
    assert sanitiser_proof(tuning_html(data)) == view.to_html() and data["text"] == repr(view)
    assert data["pivot"]["rows"][1]["values"] == [0.7, None] and data["progress"]["state"] == "done"


def test_the_snapshot_modules_read_no_records_or_tune_results():
    for path in Path(tuning.__file__).parent.glob("snapshot*.py"):
        tree = ast.parse(path.read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}

        assert not {name for name in imported if name.startswith(("tilelab.records", "tilelab.tune"))}, path.name


def test_the_live_widget_receives_the_dict_the_snapshot_is_drawn_from():
    view = TuningView(_everything())

    sent = _asked(view)

    assert sent == as_sent(view.data())
    assert sanitiser_proof(tuning_html(sent)) == view.to_html()
    assert sent["timeline"]["bars"] and sent["progress"]["verdict"].startswith("re-benchmark: best by")
    assert (view.widget.kind, set(widgets.TuningWidget.class_own_traits(sync=True))) == ("tuning", {"revision"})


def test_the_data_decides_every_colour_the_renderers_paint():
    data = as_sent(TuningView(_everything()).data())

    best = next(cell for row in data["pivot"]["rows"] for cell in row["cells"] if cell and cell["best"])
    assert (best["text"], best["background"], best["colour"]) == ("0.5", *heat_colour(0.0))
    assert {bar["colour"] for bar in data["timeline"]["bars"]} == {PHASE_COLOURS["compiling"]}
    assert [bar["width"] for bar in data["progress"]["bars"]] == [100.0, 100.0, 25.0]
    statuses = {text: colour for texts, colours in zip(data["rows"]["cells"], data["rows"]["colours"], strict=True)
                for text, colour in zip(texts, colours, strict=True) if colour}
    assert set(statuses) == {"ok", "mismatch"} and statuses["ok"] != statuses["mismatch"]


def test_a_columns_numbers_share_their_decimals_so_they_line_up_in_the_table_and_the_heat_map():
    configs = ({"block_M": 64, "block_N": 64}, {"block_M": 64, "block_N": 128}, {"block_M": 128, "block_N": 64})
    result = TuneResult("matmul", configs, ("block_M", "block_N"), "NVIDIA H100")
    for index, (config, latency) in enumerate(zip(configs, (0.2, 0.265, 0.04447), strict=True)):
        result.add(TuneRow(index, config, TuneStatus.OK, latency_ms=latency, compile_s=2.5, device="NVIDIA H100"))

    data = as_sent(TuningView(result).data())

    rows = data["rows"]
    latency = [line[rows["columns"].index("latency_ms")] for line in rows["cells"]]
    assert latency == ["0.20000", "0.26500", "0.04447"]  # as many decimals as the smallest needs for 4 digits
    assert [line[rows["columns"].index("compile_s")] for line in rows["cells"]] == ["2.5"] * 3
    assert _cell_texts(data) == latency


def test_without_a_built_bundle_the_view_is_its_snapshot_under_a_line_saying_how_to_build_it(monkeypatch, tmp_path):
    monkeypatch.setattr(widgets, "BUNDLE", tmp_path / "explorer.js")

    bundle = TuningView(_result(running=True))._repr_mimebundle_()

    assert WIDGET_MIME not in bundle
    (notice,) = parse(bundle["text/html"]).find_all("p", data_tilelab="no-bundle")
    assert "make setup" in notice.all_text() and parse(bundle["text/html"]).find_all("table", data_tilelab="tuning-rows")
