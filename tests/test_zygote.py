"""Compile workers forked by the zygote: they compile and run CPU kernels, are processes of their own that end
when killed or when the interpreter that asked for them ends, and where the zygote cannot serve (it fails to
start, refuses to fork, dies, or serves another compile environment) workers are spawned or a fresh zygote
forks them, and no sweep fails for it."""

from __future__ import annotations

import ast
import errno
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from python_child import process_ends, wait_until
from tune_kernels import kernel_module, scale_add

import tilelab
from tilelab.scratch import process_scratch
from tilelab.tune import processes
from tilelab.tune.pool import Worker, session_pool
from tilelab.tune.processes import Zygote, worker_environment, zygote_for
from tilelab.tune.result import TuneStatus
from tilelab.tune.worker import read_message
from tilelab.tune.zygote import GPUS_HIDDEN

TESTS = Path(__file__).parent


def _tune(blocks, **kwargs):
    return tilelab.tune(
        scale_add, block=tilelab.choices(blocks), reference=lambda a, b: 2 * a + b, db=":memory:", timeout=120, rebench=0,
        **kwargs,
    )  # fmt: skip


def _alive(worker: Worker) -> int:
    """The pid the worker reports once it is serving."""
    message = read_message(worker.proc.stdout)
    assert message[0] == "alive", message
    return message[1]


def _parent_of(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("PPid:")[1].split()[0])


@pytest.fixture
def own_environment(monkeypatch, tmp_path):
    """A compile environment (and so a zygote) of this test's own: a cache folder nobody else uses."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    session_pool().shutdown()
    yield
    session_pool().shutdown()


# -- forked workers --------------------------------------------------------------------------------------------
def test_a_forked_worker_compiles_a_cpu_kernel_that_runs_correctly():
    session_pool().shutdown()
    result = _tune([0, 32, 64], workers=2)
    workers, _ = session_pool().take(2)
    zygote = zygote_for(worker_environment())

    statuses = {row.config["block"]: row.status for row in result.rows.values()}
    assert statuses == {0: TuneStatus.COMPILE_ERROR, 32: TuneStatus.OK, 64: TuneStatus.OK}  # checked against 2a+b
    assert workers and all(w.proc.forked for w in workers)
    assert {_parent_of(w.proc.pid) for w in workers} == {zygote.proc.pid}
    session_pool().give_back(workers)


NOTE_ENVIRONMENT = (  # the kernel's body: what the elaborating process's environment says of the GPUs
    '(HERE / f"seen-{os.getpid()}").write_text(repr({name: os.environ.get(name) for name in '
    '("CUDA_VISIBLE_DEVICES", "PYTORCH_NVML_BASED_CUDA_CHECK", "TVM_FFI_DISABLE_TORCH_C_DLPACK")}))'
)


def test_the_zygote_imports_tilelang_seeing_no_gpu_and_its_workers_compile_in_the_notebooks_environment(
    own_environment, monkeypatch, tmp_path
):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")  # the notebook's GPU choice
    kernel = kernel_module(tmp_path, "environment_noting_kernel", "noted", body=NOTE_ENVIRONMENT)

    result = tilelab.tune(kernel, block=tilelab.choices([32, 64]), db=":memory:", workers=2, rebench=0)
    zygote = zygote_for(worker_environment())
    seen = {int(path.name.split("-")[1]): ast.literal_eval(path.read_text()) for path in tmp_path.glob("seen-*")}

    zygote_environment = Path(f"/proc/{zygote.proc.pid}/environ").read_bytes().split(b"\0")
    assert all(f"{name}={value}".encode() in zygote_environment for name, value in GPUS_HIDDEN.items())
    assert result.timeline_record.worker_start()["forked"] == 2
    workers = set(seen) - {os.getpid()}  # the notebook's process elaborates too, to benchmark
    assert len(workers) == 2
    for pid in workers:
        assert seen[pid] == {"CUDA_VISIBLE_DEVICES": "1", "PYTORCH_NVML_BASED_CUDA_CHECK": None, "TVM_FFI_DISABLE_TORCH_C_DLPACK": None}


def test_workers_from_the_zygote_are_distinct_processes_and_end_when_killed():
    workers = [Worker() for _ in range(3)]
    pids = [_alive(w) for w in workers]
    zygote = zygote_for(worker_environment())

    assert len(set(pids)) == 3 and zygote.proc.pid not in pids and os.getpid() not in pids
    assert [w.proc.pid for w in workers] == pids
    victim, *others = workers
    victim.stop()
    assert victim.proc.returncode == -signal.SIGKILL
    assert not Path(f"/proc/{pids[0]}").exists()  # reaped by the zygote, not left a zombie
    assert all(w.running() for w in others)
    for worker in others:
        worker.stop()


@pytest.mark.parametrize("started", ["forked", "spawned"])
def test_a_compile_that_times_out_is_killed_with_the_processes_it_started(own_environment, monkeypatch, tmp_path, started):
    # An nvcc or a C compiler left running by a killed worker would take a core from the configs that follow.
    if started == "spawned":
        monkeypatch.setenv("TILELAB_ZYGOTE", "0")
    body = (
        "import subprocess, time; "
        "(HERE / 'tool.pid').write_text(str(subprocess.Popen(['sleep', '600']).pid)); time.sleep(3600)"
    )
    kernel = kernel_module(tmp_path, f"timeout_with_a_tool_{started}", "runs_a_tool", body=body)

    result = tilelab.tune(kernel, block=tilelab.choices([32]), db=":memory:", timeout=5, rebench=0)

    assert result.rows[0].status == TuneStatus.TIMEOUT
    assert process_ends(int((tmp_path / "tool.pid").read_text()))


@pytest.mark.parametrize("started", ["forked", "spawned"])
def test_a_workers_temporary_files_go_with_it_and_each_compile_clears_the_last_ones(own_environment, monkeypatch, tmp_path, started):
    # TileLang's library generator (CPU kernels, the cython backend) writes each compile's source and
    # library to the temporary folder and never removes them: a sweep of a thousand configs would leave them all.
    if started == "spawned":
        monkeypatch.setenv("TILELAB_ZYGOTE", "0")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    monkeypatch.setenv("TMPDIR", str(temporary))

    result = _tune([16, 32, 64], workers=1)
    kept = [library.name for library in temporary.glob("tilelab-worker-*/**/*.so")]  # by the worker the pool keeps
    session_pool().shutdown()

    assert [row.status for row in result.rows.values()] == [TuneStatus.OK] * 3
    assert len(kept) == 1  # the last config's
    # The notebook's own folder (its compiles' files, removed when it exits) stays, empty: it loaded from the disk cache.
    assert [path for path in temporary.rglob("*") if path != Path(process_scratch())] == []


ORPHAN_SCRIPT = """
import os, signal, sys, threading, time
from pathlib import Path
sys.path.insert(0, {here!r})
import tilelab
from tilelab.tune.pool import Worker
from tilelab.tune.processes import worker_environment, zygote_for
from tilelab.tune.worker import read_message
from orphaned_tool_kernel import runs_a_tool

workers = [Worker() for _ in range(2)]
pids = [read_message(w.proc.stdout)[1] for w in workers]
print(zygote_for(worker_environment()).proc.pid, *pids, flush=True)

def killed_once_the_tool_runs():  # no atexit: the zygote, its workers and their compiles must notice by themselves
    while not (Path({here!r}) / "tool.pid").exists():
        time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGKILL)

threading.Thread(target=killed_once_the_tool_runs, daemon=True).start()
tilelab.tune(runs_a_tool, block=tilelab.choices([32]), db=":memory:", rebench=0)
"""


def test_the_zygote_its_workers_and_what_their_compiles_started_end_with_the_interpreter_that_asked_for_them(tmp_path):
    # A compile's nvcc or C compiler runs in its worker's session, which the notebook's end does not reach.
    body = "import subprocess, time; (HERE / 'tool.pid').write_text(str(subprocess.Popen(['sleep', '600']).pid)); time.sleep(3600)"
    kernel_module(tmp_path, "orphaned_tool_kernel", "runs_a_tool", body=body)
    script = ORPHAN_SCRIPT.format(here=str(tmp_path))

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    pids = [int(pid) for pid in done.stdout.split()]

    assert done.returncode == -signal.SIGKILL and len(pids) == 3, done.stderr[-2000:]
    assert all(process_ends(pid) for pid in pids)
    assert process_ends(int((tmp_path / "tool.pid").read_text()))


# -- where the zygote cannot serve -----------------------------------------------------------------------------
def test_workers_are_spawned_and_say_why_when_the_zygote_fails_to_start(own_environment, monkeypatch):
    monkeypatch.setattr(Zygote, "module", "tilelab.tune.no_such_zygote")

    result = _tune([32, 64], workers=2)
    worker = Worker()

    assert [row.status for row in result.rows.values()] == [TuneStatus.OK, TuneStatus.OK]
    assert _alive(worker) == worker.proc.pid and not worker.proc.forked
    assert "started as its own interpreter: the zygote exited" in worker.log_tail()
    assert "no_such_zygote" in worker.log_tail()
    worker.stop()


def test_workers_stopped_before_a_failing_zygote_answers_do_not_strand_the_others(own_environment, monkeypatch):
    monkeypatch.setattr(Zygote, "module", "tilelab.tune.no_such_zygote")
    stopped, kept = [Worker(), Worker()], Worker()  # asked for while the zygote starts: none answered yet
    for worker in stopped:
        worker.stop()  # killed, its log closed, before the zygote's failure is known

    assert select.select([kept.proc.stdout], [], [], 120)[0], "the kept worker was never started"
    assert _alive(kept) == kept.proc.pid and not kept.proc.forked
    assert all(worker.proc.poll() == -signal.SIGKILL and worker.proc.started for worker in stopped)
    kept.stop()


def test_workers_asked_for_while_the_zygote_imports_are_forked_once_it_is_ready(own_environment):
    workers = [Worker() for _ in range(3)]
    zygote = zygote_for(worker_environment())
    importing = not zygote.ready.is_set()  # TileLang takes seconds to import; three requests, milliseconds

    pids = [_alive(w) for w in workers]

    assert importing and all(w.proc.forked for w in workers)
    assert {_parent_of(pid) for pid in pids} == {zygote.proc.pid}
    for worker in workers:
        worker.stop()


def test_a_request_the_zygote_cannot_take_gets_a_spawned_worker_and_keeps_that_zygote(own_environment, monkeypatch):
    zygote_for(worker_environment()).ready.wait()

    def too_big(*args):
        raise OSError(errno.EMSGSIZE, "Message too long")

    monkeypatch.setattr(processes.socket, "send_fds", too_big)
    worker, again = Worker(), Worker()

    assert _alive(worker) == worker.proc.pid and not worker.proc.forked and not again.proc.forked
    assert "the zygote took no request" in worker.log_tail() and "Message too long" in worker.log_tail()
    assert not zygote_for(worker_environment()).replaceable()  # a new one would refuse it too
    worker.stop()
    again.stop()


def test_a_zygote_whose_imports_leave_threads_running_refuses_to_fork(own_environment, monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")  # numpy's OpenBLAS starts a thread of its own

    worker = Worker()
    pid = _alive(worker)

    assert not worker.proc.forked and pid == worker.proc.pid
    assert "the zygote refused to fork: its imports left 2 threads running" in worker.log_tail()
    assert "Python's threads: MainThread; the OS's threads: " in worker.log_tail()  # which, for the next run to see
    assert worker.proc.started.why_spawned in worker.log_tail() and worker.proc.started.zygote_import_s > 0
    worker.stop()


def test_a_sweep_says_its_workers_were_forked_by_the_zygote(own_environment):
    result = _tune([32, 64], workers=2)

    starts = result.timeline_record.worker_starts
    assert len(starts) == 2 and all(start.forked and start.why_spawned is None for start in starts)
    assert result.timeline_record.worker_start()["forked"] == 2
    assert "workers: 2 forked by the zygote in " in result.timeline_summary()
    assert "(its import " in result.timeline_summary()


def test_a_sweep_whose_zygote_refused_says_its_workers_were_spawned_and_why(own_environment, monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")  # numpy's OpenBLAS starts a thread of its own

    result = _tune([32, 64], workers=2)

    started = result.timeline_record.worker_start()
    assert started["forked"] == 0 and started["spawned"] == 2 and started["zygote_import_s"] > 0
    assert started["why_spawned"].startswith("the zygote refused to fork: its imports left 2 threads running")
    assert "Python's threads: MainThread" in started["why_spawned"]
    text = result.timeline_summary()
    assert "workers: 2 spawned in " in text and f"({started['why_spawned']}; the zygote's import " in text


def test_workers_outlive_a_killed_zygote_and_the_next_worker_comes_from_a_new_one(own_environment):
    old = Worker()
    _alive(old)
    first = zygote_for(worker_environment())
    first.proc.kill()
    first.proc.wait()

    assert wait_until(lambda: first.failed is not None)
    assert old.running()  # it watches the notebook's process, not its zygote
    fresh = Worker()
    _alive(fresh)
    assert fresh.proc.forked and zygote_for(worker_environment()) is not first
    old.stop()
    assert old.proc.returncode == -signal.SIGKILL  # known without the zygote that reaped it: we killed it
    fresh.stop()


def test_a_changed_compile_environment_gets_a_fresh_zygote(monkeypatch, tmp_path):
    before = zygote_for(worker_environment())
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))

    worker = Worker()
    pid = _alive(worker)
    after = zygote_for(worker_environment())

    assert after is not before and after.proc.pid != before.proc.pid and worker.proc.forked
    assert _parent_of(pid) == after.proc.pid
    assert f"TILELANG_CACHE_DIR={tmp_path}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert wait_until(lambda: before.proc.poll() is not None)  # retired: it had no children left to wait for
    worker.stop()


WARMED_BEFORE_TILELANG = """
import json, os, sys
from pathlib import Path
from tilelab.tune.pool import session_pool
from tilelab.tune.processes import worker_environment, zygote_for

session_pool().warm(2)  # as %load_ext tilelab does in a notebook's kernel: nothing has imported TileLang yet
warmed = zygote_for(worker_environment())
warm_workers = set(session_pool().idle())
assert "tilelang" not in sys.modules
sys.path.insert(0, sys.argv[1])
import tilelab
from tune_kernels import kernel_module  # imports TileLang, which adds its paths to os.environ

kernel = kernel_module(Path(sys.argv[2]), "path_noting_kernel", "noted", body=NOTE_PATHS)
result = tilelab.tune(kernel, block=tilelab.choices([32, 64]), db=":memory:", workers=2, rebench=0)
print(json.dumps({
    "same_zygote": zygote_for(worker_environment()) is warmed,
    "warm_workers_left_idle": sorted(warm_workers & set(session_pool().idle())),
    "statuses": [row.status.value for row in result.ordered_rows()],
    "forked": result.timeline_record.worker_start()["forked"],
    "parent": {name: os.environ.get(name) for name in ("PYTHONPATH", "TVM_LIBRARY_PATH")},
}))
"""
NOTE_PATHS = (
    '(HERE / f"seen-{os.getpid()}").write_text(repr({name: os.environ.get(name) for name in '
    '("PYTHONPATH", "TVM_LIBRARY_PATH")}))'
)


def test_workers_warmed_before_tilelangs_import_serve_the_sweeps_after_it(tmp_path):
    script = f"NOTE_PATHS = {NOTE_PATHS!r}\n{WARMED_BEFORE_TILELANG}"
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "TVM_LIBRARY_PATH")}
    env.update(TILELANG_CACHE_DIR=str(tmp_path / "cache"), TILELAB_POOL_MAX="2")  # a fresh kernel's environment

    done = subprocess.run(
        [sys.executable, "-c", script, str(TESTS), str(tmp_path)], env=env, capture_output=True, text=True, timeout=300
    )

    assert done.returncode == 0, done.stderr[-3000:]
    told = json.loads(done.stdout.splitlines()[-1])
    assert told["same_zygote"] and told["statuses"] == ["ok", "ok"] and told["forked"] == 0
    assert told["warm_workers_left_idle"]  # the sweep took the warm workers, and gave them back
    seen = [ast.literal_eval(path.read_text()) for path in tmp_path.glob("seen-*")]
    assert len(seen) == 3  # the two workers, and the notebook's process, which elaborates to benchmark
    for paths in seen:  # TileLang's paths, as its import set them in the notebook's process
        assert paths["TVM_LIBRARY_PATH"] == told["parent"]["TVM_LIBRARY_PATH"]
        assert set(told["parent"]["PYTHONPATH"].split(os.pathsep)) <= set(paths["PYTHONPATH"].split(os.pathsep))


def test_a_new_cache_folder_gets_its_zygote_without_waiting_for_the_old_ones_import(own_environment, monkeypatch, tmp_path):
    monkeypatch.setattr(processes, "_import_adds", {})  # as in a fresh kernel: no zygote has said what the import adds
    importing = zygote_for(worker_environment())
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "another"))  # say, %reload_ext after pointing elsewhere

    fresh = zygote_for(worker_environment())

    assert fresh is not importing and not importing.settled.is_set()  # a cache folder is no path TileLang's import sets
    assert wait_until(lambda: importing.proc.poll() is not None)  # retired


def test_pointing_the_history_elsewhere_or_resizing_the_pool_keeps_the_zygote(monkeypatch, tmp_path):
    before = zygote_for(worker_environment())
    monkeypatch.setenv("TILELAB_DB", str(tmp_path / "elsewhere.db"))
    monkeypatch.setenv("TILELAB_POOL_MAX", "3")

    worker = Worker()
    pid = _alive(worker)

    assert zygote_for(worker_environment()) is before and before.proc.poll() is None
    assert _parent_of(pid) == before.proc.pid and worker.proc.forked
    worker.stop()


def test_the_zygote_can_be_turned_off(own_environment, monkeypatch):
    monkeypatch.setenv("TILELAB_ZYGOTE", "0")

    worker = Worker()

    assert _alive(worker) == worker.proc.pid and not worker.proc.forked
    assert "zygote" not in worker.log_tail()
    assert worker.proc.started.why_spawned == "the zygote is off (TILELAB_ZYGOTE=0)"  # for the sweep's timeline
    worker.stop()
    assert processes.zygote_for(worker_environment()) is None


def test_a_process_forked_from_the_notebook_gets_a_zygote_of_its_own():
    parents = zygote_for(worker_environment())
    parents.ready.wait()
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # what multiprocessing's fork start method does with a notebook's process
        try:
            worker = Worker()
            _alive(worker)
            ours = zygote_for(worker_environment())
            os.write(writer, f"{ours.proc.pid} {_parent_of(ours.proc.pid)} {_parent_of(worker.proc.pid)}".encode())
            worker.stop()
        finally:
            os._exit(0)  # never back into pytest
    os.close(writer)
    with os.fdopen(reader) as told:
        zygote, zygote_parent, worker_parent = (int(x) for x in told.read().split())
    os.waitpid(child, 0)

    assert zygote != parents.proc.pid and zygote_parent == child and worker_parent == zygote
