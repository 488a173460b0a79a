"""Cold start of compile workers: spawned interpreters against workers forked by the zygote.

For N workers (``--counts``, default 2 and 8), each measured in a fresh process with a fresh,
empty TileLang cache (so nothing but the operating system's page cache is warm):

- ``spawned``: ``TILELAB_ZYGOTE=0``, N ``python -m tilelab.tune.worker`` started at once
  (what every sweep's first workers cost before the zygote);
- ``forked_cold``: the zygote is started by the same request (the first ``tune()`` of a
  script: one import of TileLang, then N forks);
- ``forked_warm``: the zygote was started ahead and is ready (after ``%load_ext tilelab``
  in a Jupyter kernel, or for any later worker of the session), then N forks.

Each worker gets the sweep's setup (the CPU kernel ``scale_add`` of ``tests/tune_kernels.py``)
and one config of its own to compile, all sent at the request. Per worker, seconds from the
request: ``alive`` (TileLang imported, by the worker's clock), ``ready`` (the kernel loaded)
and ``compiled`` (its first config compiled). Each row keeps the worst worker (the sweep
waits for it) and the median worker, as medians over ``--repeats`` runs taken in turn
(spawned, forked_cold, forked_warm, spawned, ...) so load on the machine hits them alike.

    python bench/bench_worker_start.py                 # ~3 minutes on 2 cores; bench/results/worker_start.json
    python bench/bench_worker_start.py --counts 16 --repeats 3 --out /tmp/worker_start.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODES = ("spawned", "forked_cold", "forked_warm")


def one(mode: str, count: int) -> dict:
    """Start ``count`` workers as ``mode`` says, in this (fresh) process; seconds from the request per worker."""
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    from tune_kernels import scale_add

    from tilelab.targets import resolve_target
    from tilelab.tune.build import spec_of
    from tilelab.tune.pool import Worker
    from tilelab.tune.processes import worker_environment, zygote_for
    from tilelab.tune.sweep import Sweep, setup_message
    from tilelab.tune.worker import read_message, write_message

    setup = setup_message(Sweep(scale_add, spec_of(scale_add), (), {}, resolve_target(target="c")), "bench")
    zygote_s = None
    if mode == "forked_warm":
        started = time.monotonic()
        zygote_for(worker_environment()).ready.wait()
        zygote_s = time.monotonic() - started
    requested, at = time.monotonic(), time.time()
    workers = [Worker(setup) for _ in range(count)]
    for number, worker in enumerate(workers):
        write_message(worker.requests, ("compile", number, {"block": 2 ** (3 + number % 8)}))
    times = {worker.proc.stdout: {} for worker in workers}
    logs = {worker.proc.stdout: worker for worker in workers}
    while any("compiled" not in seen for seen in times.values()):
        for stream in select.select([s for s, seen in times.items() if "compiled" not in seen], [], [])[0]:
            message, seen = read_message(stream), times[stream]
            if message[0] == "alive":
                seen["alive"] = message[3] - at
            elif message[0] == "ready":
                seen["ready"] = time.monotonic() - requested
            elif message[0] == "done":
                seen["compiled"] = time.monotonic() - requested
                seen["status"] = message[2]
            else:
                raise RuntimeError(f"worker said {message!r}: {logs[stream].log_tail()}")
    forked = sum(worker.proc.forked for worker in workers)
    spawned_because = sorted({worker.proc.why_spawned or "" for worker in workers if not worker.proc.forked} - {""})
    for worker in workers:
        worker.stop()
    zygote = zygote_for(worker_environment())
    return {
        "mode": mode, "workers": count, "forked": forked, "spawned_because": spawned_because, "times": list(times.values()),
        "zygote_import_s": zygote.info.get("import_s") if zygote else None, "zygote_ready_before_s": zygote_s,
    }  # fmt: skip


def _measure(mode: str, count: int) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TILELANG_CACHE_DIR": cache, "TILELAB_ZYGOTE": "0" if mode == "spawned" else "1"}
        done = subprocess.run(
            [sys.executable, __file__, "--one", mode, str(count)], env=env, capture_output=True, text=True, timeout=600
        )
    if done.returncode:
        raise RuntimeError(f"{mode} x{count} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _summary(runs: list[dict]) -> dict:
    """Medians over runs of the worst and the median worker, per phase."""
    row = {"runs": len(runs), "forked_workers": [run["forked"] for run in runs]}
    reasons = sorted({why for run in runs for why in run.get("spawned_because", [])})
    if reasons:  # e.g. the zygote refused to fork on this host, and why (its threads, CUDA)
        row["spawned_because"] = reasons
    for phase in ("alive", "ready", "compiled"):
        worst = [max(t[phase] for t in run["times"]) for run in runs]
        middle = [statistics.median(t[phase] for t in run["times"]) for run in runs]
        row[f"{phase}_all_s"] = round(statistics.median(worst), 3)
        row[f"{phase}_median_s"] = round(statistics.median(middle), 3)
        row[f"{phase}_all_runs_s"] = [round(x, 3) for x in worst]
    imports = [run["zygote_import_s"] for run in runs if run["zygote_import_s"] is not None]
    if imports:
        row["zygote_import_s"] = round(statistics.median(imports), 3)
    return row


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[2, 8])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "worker_start.json")
    parser.add_argument("--one", nargs=2, metavar=("MODE", "N"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.one:
        print(json.dumps(one(options.one[0], int(options.one[1]))))
        return
    import tilelang

    load_before, rows = os.getloadavg()[0], []
    for count in options.counts:
        runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
        for _ in range(options.repeats):
            for mode in MODES:
                runs[mode].append(_measure(mode, count))
        for mode in MODES:
            rows.append({"mode": mode, "workers": count, **_summary(runs[mode])})
            print(json.dumps(rows[-1]), flush=True)
    result = {
        "device": f"cpu: {_cpu_model()}", "cpus": len(os.sched_getaffinity(0)), "python": platform.python_version(),
        "tilelang": tilelang.__version__, "date": datetime.date.today().isoformat(), "repeats": options.repeats,
        "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],  # before, after: a shared machine
        "what": "seconds from the request of N workers: alive (TileLang imported), ready (kernel loaded), compiled "
        "(one CPU config each); *_all_s: the last worker, *_median_s: the median worker; medians over runs",
        "rows": rows,
        "speedup_all_ready": {
            str(count): {
                mode: round(_row(rows, "spawned", count)["ready_all_s"] / _row(rows, mode, count)["ready_all_s"], 1)
                for mode in MODES[1:]
            }
            for count in options.counts
        },
    }  # fmt: skip
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {options.out}")


def _row(rows: list[dict], mode: str, count: int) -> dict:
    return next(r for r in rows if r["mode"] == mode and r["workers"] == count)


if __name__ == "__main__":
    main()
