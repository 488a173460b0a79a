"""Where a sweep's time goes, and timings you can trust, on real CPU-target sweeps: every config's phases,
the warm worker pool, a wall-clock budget, confirmation of too-good timings and ties (the timing of calls
comes from a seeded fake timer through tune()'s ``timer`` hook where the test needs to know the truth)."""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from htmlcheck import charts, parse
from tune_kernels import scale_add
from tune_timers import FlukeTimer, SteadyTimer

import tilelab
from tilelab.tune.budget import duration_of
from tilelab.tune.pool import session_pool
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.tune.timeline import PHASES, Timeline, WorkerStart
from tilelab.views.tuning import TuningView

TESTS = Path(__file__).parent
BLOCKS = [0, 32, 64, 128]  # 0 fails to lower


def _tune(blocks, **kwargs):
    kwargs.setdefault("timeout", 60)
    return tilelab.tune(scale_add, block=tilelab.choices(blocks), reference=lambda a, b: 2 * a + b, db=":memory:", **kwargs)


@pytest.fixture(scope="module")
def sweep():
    return _tune(BLOCKS)


def _by_block(result) -> dict:
    return {row.config["block"]: row for row in result.rows.values()}


# -- the timeline ---------------------------------------------------------------------------------------------
def test_every_config_goes_through_its_phases_in_order_without_overlap(sweep):
    frame = sweep.timeline()

    assert set(frame["block"]) == set(BLOCKS)
    for block, spans in frame.groupby("block"):
        spans = spans.sort_values("start_s")
        assert list(spans["phase"].cat.codes) == sorted(spans["phase"].cat.codes), block  # PHASES order
        assert (spans["start_s"].to_numpy()[1:] >= spans["end_s"].to_numpy()[:-1]).all(), block
        assert (spans["end_s"] >= spans["start_s"]).all()
    phases = {block: list(spans["phase"]) for block, spans in frame.groupby("block")}
    assert phases[0] == ["queued", "compiling"]  # a compile error ends there
    assert {"compiling", "checking", "benchmarking"} <= set(phases[32])


def test_the_timeline_frame_holds_spans_with_their_lane():
    result = _tune([32, 64], workers=1)
    frame = result.timeline()

    assert list(frame.columns) == ["block", "index", "phase", "start_s", "end_s", "duration_s", "lane"]
    assert set(frame.loc[frame["phase"] == "compiling", "lane"]) == {"worker 1"}
    assert set(frame.loc[frame["phase"] == "benchmarking", "lane"]) == {"bench"}
    assert list(frame["phase"].cat.categories) == list(PHASES)


def test_the_summary_says_how_busy_compiles_and_benchmarks_were_and_what_bounded_the_sweep(sweep):
    summary = sweep.timeline_record.summary()

    assert 0 < summary.compile_busy <= 1 and 0 < summary.bench_busy <= 1
    assert summary.critical_path in ("compiles", "benchmarks", "worker start")
    text = sweep.timeline_summary()
    assert text.startswith(f"compile {summary.compile_busy:.0%}".replace("%", " %"))
    assert f"critical path: {summary.critical_path}" in text and "first compile after" in text


def test_a_summary_of_hand_made_spans_names_the_busiest_resource():
    timeline = Timeline(origin=0.0, workers=2, warm_workers=2)
    timeline.spans = [
        *(_span(i, "compiling", 0.0, 4.0) for i in range(4)),  # 16 s of compiles on 2 workers: 8 s of wall
        *(_span(i, "benchmarking", 4.0 + i, 4.5 + i) for i in range(4)),  # 2 s of benchmarks
    ]

    summary = timeline.summary()

    assert summary.critical_path == "compiles" and summary.bench_busy == pytest.approx(2 / 7.5)
    assert summary.text() == (
        "compile 100 % of 2 workers busy, bench 27 % busy, critical path: compiles; workers: 2 from the warm pool;"
        " first compile after 0.00 s"
    )


def test_the_summary_says_whether_the_zygote_forked_the_cold_workers_or_why_they_were_spawned():
    forked = Timeline(origin=0.0, workers=2)
    forked.spans = [_span(0, "compiling", 3.0, 4.0)]
    forked.started_workers(0, 2, 3.1, WorkerStart(forked=True, zygote_import_s=2.6))
    forked.started_workers(0, 0, None, WorkerStart(forked=True, zygote_import_s=2.6))
    spawned = Timeline(origin=0.0, workers=2, spans=forked.spans)
    why = "the zygote refused to fork: its imports left 5 threads running"
    spawned.started_workers(0, 2, 12.6, WorkerStart(forked=False, why_spawned=why, zygote_import_s=2.6))
    spawned.started_workers(0, 0, None, WorkerStart(forked=False, why_spawned=why, zygote_import_s=2.6))
    unknown = Timeline(origin=0.0, workers=2, spans=forked.spans)
    unknown.started_workers(0, 2, 8.6)

    assert "; workers: 2 forked by the zygote in 3.1 s (its import 2.6 s);" in forked.summary().text()
    assert f"; workers: 2 spawned in 12.6 s ({why}; the zygote's import 2.6 s);" in spawned.summary().text()
    assert "; workers: 2 started cold in 8.6 s;" in unknown.summary().text()  # an engine that does not say
    assert spawned.worker_start() == {"forked": 0, "spawned": 2, "why_spawned": why, "zygote_import_s": 2.6}


def _span(index, phase, start, end):
    from tilelab.tune.timeline import Span

    return Span(index, phase, start, end)


# -- the warm pool -----------------------------------------------------------------------------------------------
def test_a_second_sweep_takes_its_compile_workers_warm_from_the_session_pool():
    first = _tune([32], workers=1, rebench=0)
    pooled = set(session_pool().idle())
    second = _tune([64], workers=1, rebench=0)

    assert pooled  # the first sweep's worker waits in the pool
    assert second.timeline_record.warm_workers == 1 and second.timeline_record.cold_workers == 0
    assert "1 from the warm pool" in second.timeline_summary()
    assert set(session_pool().idle()) & pooled  # the same process served both
    assert first.best is not None and second.best is not None


def test_loading_the_extension_in_a_jupyter_kernel_starts_the_compile_workers_ahead(monkeypatch):
    from tilelab.magic import _warm_compile_workers

    class Terminal:
        kernel = None

    class Kernel:
        kernel = object()

    monkeypatch.setenv("TILELAB_POOL_MAX", "1")  # the pool's bound
    session_pool().shutdown()
    _warm_compile_workers(Terminal())
    assert session_pool().idle() == []  # outside a kernel the first tune() starts them

    _warm_compile_workers(Kernel())
    assert len(session_pool().idle()) == 1


def test_a_pool_bounded_to_none_starts_no_zygote_and_keeps_no_worker(monkeypatch):
    from tilelab.magic import _warm_compile_workers
    from tilelab.tune import pool

    class Kernel:
        kernel = object()

    monkeypatch.setenv("TILELAB_POOL_MAX", "0")
    session_pool().shutdown()
    zygotes_asked = []
    with monkeypatch.context() as spy:
        spy.setattr(pool, "zygote_for", lambda env: zygotes_asked.append(env))
        _warm_compile_workers(Kernel())
    assert session_pool().idle() == [] and zygotes_asked == []  # nothing started ahead

    result = _tune([32], workers=1, rebench=0)
    assert result.best is not None and result.timeline_record.cold_workers == 1
    assert session_pool().idle() == []  # the sweep's worker was let go when it ended


def test_a_worker_that_compiled_many_configs_is_let_go_instead_of_pooled():
    from tilelab.tune.pool import RECYCLE_AFTER, Pool, Worker

    pool, fresh, worn = Pool(), Worker(), Worker()
    worn.compiles = RECYCLE_AFTER  # TileLang keeps what it compiled in memory: a long-lived worker only grows

    pool.give_back([fresh, worn])

    assert pool.idle() == [fresh.proc.pid] and worn.proc.poll() is not None
    pool.shutdown()
    assert pool.idle() == [] and fresh.proc.poll() is not None


POOL_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
import tilelab
from tilelab.tune.pool import session_pool
from tune_kernels import scale_add
tilelab.tune(scale_add, block=tilelab.choices([32]), db=":memory:", workers=1, rebench=0)
print(*session_pool().idle(), flush=True)
"""


def test_pooled_workers_end_with_the_interpreter_that_started_them():
    done = subprocess.run([sys.executable, "-c", POOL_SCRIPT.format(tests=str(TESTS))], capture_output=True, text=True, timeout=300)
    pooled = [int(pid) for pid in done.stdout.split()]

    assert done.returncode == 0 and len(pooled) == 1, done.stderr[-2000:]
    for _ in range(100):  # killed at exit; a worker whose parent vanished exits within a second by itself
        if not any(_running(pid) for pid in pooled):
            break
        time.sleep(0.1)
    assert not any(_running(pid) for pid in pooled)


def _running(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "State:\tZ" not in status.read_text()  # a zombie has exited
    except OSError:
        return False


def test_an_interrupt_kills_a_hung_compile_and_leaves_only_idle_workers_in_the_pool():
    from tune_kernels import HANG_BLOCK

    def interrupt(row):
        raise KeyboardInterrupt

    partial = _tune([0, HANG_BLOCK], workers=2, timeout=600, on_row=interrupt)  # 0 fails at once; the other hangs

    assert partial.partial and [row.status for row in partial.rows.values()] == [TuneStatus.COMPILE_ERROR]
    assert set(_compile_workers()) <= set(session_pool().idle())  # the hung one is gone, not pooled


def _compile_workers() -> list[int]:
    """This process's compile worker processes still alive: spawned, or forked by its zygote."""
    pids = _children(os.getpid())
    forked = [child for pid in pids if b"tilelab.tune.zygote" in _cmdline(pid) for child in _children(pid)]
    return [pid for pid in pids if b"tilelab.tune.worker" in _cmdline(pid)] + forked


def _children(parent: int) -> list[int]:
    pids = []
    for task in Path(f"/proc/{parent}/task").iterdir():
        pids += [int(p) for p in (task / "children").read_text().split()]
    return pids


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone since it was listed
        return b""


# -- how rows are timed ------------------------------------------------------------------------------------------
def test_rows_record_how_they_were_timed_and_their_noise_band(sweep):
    for row in sweep.rows.values():
        if not row.ok:
            assert row.timing is None and row.noise_low_ms is None
            continue
        assert row.timing == "wall" and row.repetitions >= 2
        assert row.latency_min_ms <= row.noise_low_ms <= row.latency_median_ms <= row.noise_high_ms
    frame = sweep.to_pandas()
    assert {"timing", "noise_low_ms", "noise_high_ms", "first_ms"} <= set(frame.columns)
    assert sweep.gpu_state == {"start": None, "end": None}  # no GPU clocks on the CPU


def test_the_top_configs_are_rebenchmarked_interleaved_with_a_verdict(sweep):
    rebenched = [row for row in sweep.rows.values() if row.rebench_ms is not None]
    frame = sweep.timeline()

    assert len(rebenched) == 3 and sweep.verdict is not None
    assert sweep.best in rebenched and sweep.verdict.best == sweep.best.index
    assert sweep.verdict_text().startswith(("best by ", "top "))
    spans = frame[frame["phase"] == "rebenchmarking"]
    assert len(spans) == 3 and spans["start_s"].nunique() <= 3 and spans["end_s"].max() >= spans["start_s"].max()


def test_a_suspiciously_fast_first_timing_is_confirmed_before_it_becomes_the_best():
    timer = FlukeTimer({32: 1.0, 64: 2.0, 128: 1.2}, fluke=64, fast=0.5)  # block 64 is lucky at first

    result = _tune([32, 64, 128], workers=1, timer=timer)
    rows = _by_block(result)

    assert rows[64].first_ms == pytest.approx(0.5)  # it beat the best (32: 1 ms) by far more than the noise
    assert rows[64].latency_ms == pytest.approx(2.0)  # timed again: the slower timing stands
    assert rows[32].first_ms is None and rows[128].first_ms is None
    assert result.best.config == {"block": 32}
    assert rows[64].timing == "timer FlukeTimer"
    confirming = result.timeline().query("phase == 'confirming'")
    assert list(confirming["block"]) == [64]


def test_configs_the_rebenchmark_cannot_tell_apart_are_reported_and_marked_as_a_tie():
    result = _tune([32, 64, 128], workers=1, timer=SteadyTimer({32: 1.0, 64: 1.0, 128: 1.5}, seed=0))

    assert result.verdict_text().startswith("top 2 indistinguishable at this noise")
    tied = {result.rows[i].config["block"] for i in (result.verdict.best, *result.tied())}
    assert tied == {32, 64}
    table = parse(TuningView(result).rows_html()).find_all("table", data_tilelab="tuning-rows")[0]
    marks = {cells[1].all_text(): cells[0].all_text() for cells in (tr.find_all("td") for tr in table.find_all("tr")[1:])}
    assert sorted(marks.values()) == ["", "≈", "★"] and marks["128"] == ""
    assert "indistinguishable" in parse(TuningView(result).to_html()).find_all("span", data_tilelab="tuning-verdict")[0].all_text()


# -- a wall-clock budget ---------------------------------------------------------------------------------------------
def test_a_wall_clock_budget_stops_new_configs_and_says_how_much_was_covered():
    _tune([32], workers=1, rebench=0)  # a warm worker: the first config starts well within the budget
    started = time.monotonic()

    def past_the_budget(row):
        time.sleep(max(0.0, started + 5.2 - time.monotonic()))

    result = _tune([0, 32, 64, 128], workers=1, budget="5s", on_row=past_the_budget)  # 0 fails at once

    assert [row.config["block"] for row in result.rows.values()] == [0]
    assert result.budget_reached and result.budget_s == 5.0 and not result.partial
    assert result.coverage() == "budget of 5 s reached: no config started after it; 1 of 4 configs (25 %), 1 measured in this run"
    assert "budget of 5 s reached" in TuningView(result).to_html()


def test_a_budget_no_config_outlasted_was_not_reached():
    result = _tune([32, 64], workers=1, budget=datetime.timedelta(minutes=10))

    assert not result.budget_reached and result.budget_s == 600.0 and result.done == 2
    assert result.coverage() == "2 of 2 configs (100 %)"


def test_the_tune_line_takes_a_wall_clock_budget():
    from tilelab.tune.api import tune_from_line

    result = tune_from_line("tune scale_add block=32,64 --budget 3m --workers 1 --db ':memory:'", {"scale_add": scale_add})

    assert result.budget_s == 180.0 and not result.budget_reached and result.done == 2


@pytest.mark.parametrize(("written", "seconds"), [("90s", 90), ("3m", 180), ("3min", 180), ("1h30m", 5400), ("500ms", 0.5), ("2.5 min", 150)])
def test_budget_durations_read_as_seconds(written, seconds):
    assert duration_of(written) == pytest.approx(seconds)


@pytest.mark.parametrize("written", ["3 parsecs", "m3", "", "0s", "3m4"])
def test_a_budget_that_is_not_a_duration_is_one_line_naming_it(written):
    with pytest.raises(ValueError, match=r"^budget=") as error:
        tilelab.tune(scale_add, block=tilelab.choices([32]), db=":memory:", budget=written)

    assert "\n" not in str(error.value)


def test_the_command_line_takes_a_wall_clock_budget_and_prints_where_the_time_went(tmp_path):
    shutil.copy(TESTS / "search_kernels.py", tmp_path / "search_kernels.py")

    done = subprocess.run(
        [sys.executable, "-m", "tilelab", "tune", "search_kernels.py::axpy_repeat", "block=32,64", "--target", "c",
         "--budget", "10m", "--db", ":memory:", "--out", "rows.csv"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    refused = subprocess.run(
        [sys.executable, "-m", "tilelab", "tune", "k.py::k", "--budget", "3parsecs"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert "2/2 configs" in done.stdout and "critical path: " in done.stdout and "budget" not in done.stdout
    assert refused.returncode == 2 and "'3parsecs': expected a duration such as 90s, 3m or 1h30m" in refused.stderr


# -- the Gantt chart ---------------------------------------------------------------------------------------------------
def test_the_snapshot_draws_a_bar_per_phase_with_escaped_labels_and_theme_colours():
    hostile = "<img src=x onerror=alert(1)>"
    configs = ({"tile": hostile}, {"tile": "plain"})
    result = TuneResult("k<script>", configs, ("tile",), "cpu")
    result.add(TuneRow(0, configs[0], TuneStatus.OK, latency_ms=1.0))
    result.add(TuneRow(1, configs[1], TuneStatus.COMPILE_ERROR, error="bad"))
    timeline = result.timeline_record = Timeline(origin=0.0, workers=1)
    timeline.spans = [_span(0, "compiling", 0.1, 2.0), _span(0, "benchmarking", 2.0, 2.5), _span(1, "compiling", 2.0, 3.0)]

    markup = TuningView(result).to_html()
    (svg,) = [chart for chart in charts(parse(markup)) if chart.attrs["data-tilelab"] == "tuning-timeline"]

    assert "<img src=x" not in markup and "<script" not in markup and hostile.replace("<", "&lt;")[:8] in markup
    assert sorted(rect.attrs["data-phase"] for rect in svg.find_all("rect")) == ["benchmarking", "compiling", "compiling"]
    assert all("var(--jp-" in rect.attrs["style"] for rect in svg.find_all("rect"))
    assert "compile" in parse(markup).find_all("div", data_tilelab="timeline-summary")[0].all_text()


def test_a_long_row_label_is_cut_with_an_ellipsis_to_fit_the_label_column_and_its_tooltip_keeps_it_whole():
    configs = ({"block_M": 128, "block_N": 128, "num_stages": 3}, {"BLOCK": "W" * 40}, {"block": 64})
    result = TuneResult("matmul", configs, ("block_M", "block_N", "num_stages", "BLOCK", "block"), "cpu")
    result.timeline_record = Timeline(origin=0.0, workers=1)
    result.timeline_record.spans = [_span(index, "compiling", index, index + 1.0) for index in range(3)]

    timeline = TuningView(result).data()["timeline"]

    shown = [row["text"] for row in timeline["rows"]]
    assert shown[0].startswith("block_M=128, block_N=128, num") and shown[0].endswith("…")
    assert shown[1].startswith("BLOCK=WWW") and len(shown[1]) < len(shown[0])  # wide letters: fewer of them
    assert shown[2] == "block=64"
    assert [bar["tip"].split(":")[0] for bar in timeline["bars"]] == [row["label"] for row in timeline["rows"]]
    assert timeline["rows"][0]["label"] == "block_M=128, block_N=128, num_stages=3"
    tips = [tip.attrs["title"] for tip in parse(TuningView(result).to_html()).find_all("div", **{"class": "tl-chart-tip"})]
    assert tips.count("block_M=128, block_N=128, num_stages=3") == 1  # the cut label's hover box; bars' tips add a phase
    assert "block=64" not in tips  # a label shown whole needs none


def test_a_worker_given_back_displaces_one_started_under_an_environment_that_has_since_changed(monkeypatch, tmp_path):
    from tilelab.tune.pool import Pool, Worker

    monkeypatch.setenv("TILELAB_POOL_MAX", "1")
    pool = Pool()
    pool.warm()
    (stale,) = pool.idle()
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))  # compiles would now read another cache

    assert pool.take(1) == ([], 1)  # the pooled worker does not serve this environment
    fresh = Worker()
    pool.give_back([fresh])

    assert pool.idle() == [fresh.proc.pid]  # kept for the next sweep; the stale one made room
    assert not Path(f"/proc/{stale}").exists()
    assert pool.take(1) == ([fresh], 0)
    fresh.stop()
    pool.shutdown()
