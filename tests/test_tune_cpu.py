"""A real CPU-target sweep, end to end: rows and statuses, tables, SQLite history, re-runs, interrupts."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from python_child import finish, start_python

import tilelab
from tilelab.provenance import PROVENANCE_COLUMNS
from tilelab.tune.pool import session_pool
from tilelab.tune.result import TuneStatus

TESTS = Path(__file__).parent
BLOCKS = [0, 32, 64, 96, 128]  # 0 fails to lower, 96 hangs (tune_kernels.HANG_BLOCK)
TIMEOUT_S = 6


def _space(config):
    return config["block"] not in (0, 96) or config["chunk"] == 1


def _sweep(db, **kwargs):
    from tune_kernels import scale_add

    return tilelab.tune(
        scale_add,
        block=kwargs.pop("block", tilelab.choices(BLOCKS)),
        chunk=tilelab.choices([1, 4]),
        where=_space,
        reference=lambda a, b: 2 * a + b,
        bytes=3 * 4096 * 4,
        timeout=TIMEOUT_S,
        db=db,
        **kwargs,
    )


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return tmp_path_factory.mktemp("tune") / "history.db"


@pytest.fixture(scope="module")
def sweep(db):
    return _sweep(db)


def _children() -> list[int]:
    """This process's compile workers still alive (other children, e.g. a background nvcc, are not ours to count)."""
    pids = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        pids += [int(p) for p in (task / "children").read_text().split()]
    return [pid for pid in pids if b"tilelab.tune.worker" in _cmdline(pid)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone since it was listed
        return b""


def test_every_config_becomes_a_row_with_its_status(sweep):
    statuses = {(row.config["block"], row.config["chunk"]): row.status for row in sweep.ordered_rows()}

    assert len(statuses) == 8
    assert statuses.pop((0, 1)) is TuneStatus.COMPILE_ERROR
    assert statuses.pop((96, 1)) is TuneStatus.TIMEOUT
    assert set(statuses.values()) == {TuneStatus.OK}
    assert sweep.num_errors == 2 and not sweep.partial and not sweep.running


def test_failed_rows_say_why_and_ok_rows_are_timed(sweep):
    rows = {row.config["block"]: row for row in sweep.ordered_rows() if row.config["chunk"] == 1}

    assert "Divide by zero" in rows[0].error
    assert f"{TIMEOUT_S} s" in rows[96].error
    assert all(row.latency_ms > 0 and row.gbps > 0 and row.compile_s > 0 for row in sweep.rows.values() if row.ok)


def test_the_best_is_chosen_on_an_interleaved_rebenchmark_of_the_top_three(sweep):
    ok = sorted((row for row in sweep.rows.values() if row.ok), key=lambda row: row.latency_ms)
    rebenched = [row for row in ok if row.rebench_ms is not None]

    assert rebenched == ok[:3]
    assert sweep.best == min(rebenched, key=lambda row: row.rebench_ms)


def test_to_pandas_has_one_typed_row_per_config(sweep):
    frame = sweep.to_pandas()

    assert frame.shape == (8, 31 + len(PROVENANCE_COLUMNS))  # the provenance columns last
    assert list(frame.columns[:3]) == ["block", "chunk", "status"]
    assert str(frame["block"].dtype) == "int64" and str(frame["status"].dtype) == "category"
    assert all(str(frame[c].dtype) == "float64" for c in ("latency_ms", "tflops", "gbps", "compile_s", "bench_s"))
    assert frame["latency_ms"].isna().sum() == 2
    assert str(frame["trial"].dtype) == "Int64" and set(frame["chosen_by"]) == {"grid"}
    assert frame["registers"].isna().all() and frame["launchable"].isna().all()  # machine code is for CUDA targets


def test_ok_rows_carry_the_spread_of_their_repetitions(sweep):
    ok = sweep.to_pandas().query("status == 'ok'")

    assert (ok["repetitions"] >= 1).all()
    assert (ok["latency_min_ms"] <= ok["latency_median_ms"]).all()
    assert (ok["latency_median_ms"] <= ok["latency_p90_ms"]).all()
    assert (ok["latency_std_ms"] >= 0).all()
    assert (ok["latency_ms"] >= ok["latency_min_ms"]).all()


def test_pivot_highlights_the_true_minimum(sweep):
    styler = sweep.pivot(index="block", columns="chunk")
    html = styler.to_html()
    table = sweep.pivot_table(index="block", columns="chunk")
    lowest = table.min().min()
    at_lowest = {f"row{i}_col{j}" for i, j in zip(*(table == lowest).to_numpy().nonzero(), strict=True)}

    # The Styler writes one rule for the cells that share a style: "#T_x_row2_col0, #T_x_row4_col0 { ... }".
    rules = re.findall(r"([^{}]+)\{\s*background-color: #b7e4c7;\s*font-weight: bold;", html)
    highlighted = {cell for selectors in rules for cell in re.findall(r"row\d+_col\d+", selectors)}

    assert lowest == min(row.latency_ms for row in sweep.rows.values() if row.ok)
    assert at_lowest and highlighted == at_lowest  # a tie (CPU medians are whole nanoseconds) lights each cell


def test_best_kernel_is_compiled_and_correct(sweep):
    import torch

    a, b = torch.randn(4096), torch.randn(4096)

    assert torch.allclose(sweep.best_kernel(a, b), 2 * a + b)
    assert sweep.best_config == sweep.best.config


def test_history_restores_the_rows_in_a_new_process(sweep, db):
    code = f"import tilelab; print(tilelab.tuning_history('scale_add', db={str(db)!r}).to_json(orient='records'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    rows = json.loads(out.stdout)

    assert len(rows) == 8
    assert {(r["block"], r["chunk"], r["status"]) for r in rows} == {
        (row.config["block"], row.config["chunk"], row.status.value) for row in sweep.rows.values()
    }
    assert {r["run_id"] for r in rows} == {sweep.id}


def test_rerun_skips_configs_already_measured(sweep, db):
    again = _sweep(db, block=tilelab.choices([*BLOCKS, 16]))
    measured = [row for row in again.ordered_rows() if not row.cached]  # rows arrive in completion order

    assert [row.config for row in measured] == [{"block": 16, "chunk": 1}, {"block": 16, "chunk": 4}]
    assert again.done == 10
    assert min(r.latency_ms for r in again.rows.values() if r.ok) <= min(r.latency_ms for r in sweep.rows.values() if r.ok)
    assert again.rows[1].latency_ms == sweep.rows[1].latency_ms  # restored, not re-measured


def test_an_interrupt_returns_the_rows_so_far_and_leaves_no_worker_compiling(db):
    seen = []

    def interrupt_after_two(row):
        seen.append(row)
        if len(seen) == 2:
            raise KeyboardInterrupt

    partial = _sweep(db, block=tilelab.choices([0, 32, 64]), force=True, on_row=interrupt_after_two)
    statuses = sorted(row.status.value for row in partial.rows.values())

    assert partial.partial and not partial.running
    assert statuses == ["compile_error", "compiled", "compiled", "compiled", "ok"]  # 3 compiled, never timed
    assert partial.done == 5 and len(partial.to_pandas()) == 5 and partial.num_errors == 1
    assert set(_children()) <= set(session_pool().idle())  # the only workers left wait, idle, in the session's pool
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        stored = conn.execute("SELECT status FROM tuning_rows WHERE run_id = ? ORDER BY status", (partial.id,)).fetchall()
    assert [status for (status,) in stored] == statuses


def test_sigint_mid_sweep_keeps_finished_rows_and_a_readable_database(tmp_path):
    db = tmp_path / "sigint.db"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(TESTS)!r})
        import tilelab
        from tune_kernels import scale_add
        result = tilelab.tune(scale_add, block=tilelab.choices([0, 96, 32]), timeout=600, db={str(db)!r},
                              on_row=lambda row: print("row", row.status.value, flush=True))
        print("partial", result.partial, result.done, flush=True)
    """)
    proc = start_python(script)
    first = proc.stdout.readline().strip()  # block 0 failed; block 96 hangs until interrupted
    proc.send_signal(signal.SIGINT)
    out = finish(proc, timeout_s=60)

    assert first == "row compile_error"
    assert out.strip() == "partial True 1"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert list(tilelab.tuning_history(db=db)["status"]) == ["compile_error"]


CELL = '''
import tilelang
import tilelang.cpu.language as C
import tilelab

SCALE = 3.0

@tilelang.jit(target="c", out_idx=[-1])
def cell_scale(N=1024, block=64):
    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            for i in C.serial(block):
                Out[bx * block + i] = A[bx * block + i] * SCALE

    return main

result = tilelab.tune(cell_scale, block=tilelab.choices([32, 64]), reference=lambda a: a * SCALE, db=DB)
'''


def test_a_kernel_defined_in_a_notebook_cell_compiles_in_workers(tmp_path):
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.user_ns["DB"] = tmp_path / "cell.db"
    shell.run_cell(CELL).raise_error()
    result = shell.user_ns["result"]

    assert not Path(result.kernel.func.orig_func.__code__.co_filename).is_file()  # only in linecache
    assert [row.status for row in result.ordered_rows()] == [TuneStatus.OK, TuneStatus.OK]


SCRIPT_KERNEL = '''
from __future__ import annotations  # annotations are strings: TileLang evaluates them in the module's globals

import tilelang
import tilelang.cpu.language as C
import tilelab


@tilelang.jit(target="c", out_idx=[-1])
def doubled(N=1024, block=64):
    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            for i in C.serial(block):
                Out[bx * block + i] = A[bx * block + i] * 2.0

    return main


if __name__ == "__main__":
    result = tilelab.tune(doubled, block=tilelab.choices([32, 64]), db=":memory:")
    print(sorted(row.status.value for row in result.rows.values()))
'''


def test_a_kernel_of_a_script_with_string_annotations_compiles_in_workers(tmp_path):
    script = tmp_path / "script_kernel.py"
    script.write_text(SCRIPT_KERNEL)

    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)

    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "['ok', 'ok']"
