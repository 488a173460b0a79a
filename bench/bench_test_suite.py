"""Where the test suite's CPU goes, by kind of process: the figures behind the 10-minute rule.

``make test`` is CPU-bound on CI's two cores: its wall time is about its busy
CPU-seconds over two. Per-test durations (``pytest --durations``) say which
tests are slow, not what they spend it on: most of a test's CPU is in the
processes it starts (Jupyter kernels, Chromium, compile workers, nvcc). This
runs the suite (or any command) while it reads ``/proc`` every 0.2 s, keeps the
last CPU time seen of every process started meanwhile, and sums it by kind of
process, told from its command line:

- ``zygote``: a compile-worker zygote (it imports TileLang once); ``compile
  worker (forked)``: one of its forks, which lowers and compiles configs;
- ``Jupyter kernel``, ``JupyterLab server``, ``Chromium``, ``pytest``
  (the runner and its workers, where the in-process tests run);
- ``tilelab CLI``, ``Dask`` (its scheduler; its workers are multiprocessing
  children), ``PostgreSQL``, ``other Python`` (a test's own child
  interpreter, a benchmark's smoke run);
- the CUDA toolchain (``nvcc``, ``cicc``, ``ptxas``, ``nvdisasm``) and the host
  compiler (``gcc``: TileLang's CPU kernels, nvcc's preprocessing).

Only the command's own processes count, by the parent each had when first
read (a daemon that left its parent before that, PostgreSQL's server say, does
not). A process that ends between two reads loses up to 0.2 s of its CPU and one
that lives less than that may be missed: the total comes out a little under the
machine's busy CPU-seconds, which the results give beside it.

    python bench/bench_test_suite.py                  # the suite as make test runs it; bench/results/test_suite.json
    python bench/bench_test_suite.py --out /tmp/x.json -- python -m pytest -q tests/test_cli.py
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import platform
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SUITE = [sys.executable, "-m", "pytest", "-q", "-n", "auto", "--dist", "loadgroup", "--no-loadscope-reorder", "tests"]
INTERVAL_S = 0.2
TICK = os.sysconf("SC_CLK_TCK")

# Tools known by their program's name (their arguments name other tools: nvcc's ``-Xptxas``).
PROGRAMS = {
    "cicc": "cicc (nvcc's device compiler)",
    "ptxas": "ptxas",
    "nvdisasm": "nvdisasm",
    "cuobjdump": "nvdisasm",
    "nvcc": "nvcc",
    "cc1plus": "gcc",
    "cc1": "gcc",
    "gcc": "gcc",
    "g++": "gcc",
    "chromium": "Chromium",
    "node": "node",
}
# Else the first of these found in the command line.
KINDS = (
    ("tilelab.tune.zygote", "zygote"),
    ("ipykernel", "Jupyter kernel"),
    ("jupyterlab", "JupyterLab server"),
    ("tilelab.tune.worker", "compile worker (spawned)"),
    ("-m tilelab ", "tilelab CLI"),
    ("distributed", "Dask"),
    ("dask", "Dask"),
    ("postgres", "PostgreSQL"),
    ("exec(eval(sys.stdin.readline()))", "pytest"),  # pytest-xdist's workers
    ("-m pytest ", "pytest"),  # not any command line naming pytest's temporary folder
    ("multiprocessing.spawn", "multiprocessing child (Dask's workers)"),
    ("python", "other Python"),
)


@dataclass
class Process:
    """One process seen: its command line (up to 300 characters) and the last CPU time read of it."""

    pid: int
    ppid: int
    started: float  # seconds after boot (with pid, tells a reused pid apart)
    command: str
    cpu_s: float
    test: str | None = None  # the test it was started under (its PYTEST_CURRENT_TEST), if any


def kind_of(command: str) -> str:
    """The kind of process a command line names (see :data:`PROGRAMS` and :data:`KINDS`), else its program's name."""
    program = Path(command.split(" ", 1)[0]).name
    if program in PROGRAMS or program.startswith("x86_64-linux-gnu-g"):
        return PROGRAMS.get(program, "gcc")
    padded = command + " "
    for needle, kind in KINDS:
        if needle in padded:
            return kind
    return program or "unnamed"


def read_processes(seen: dict[tuple[int, float], Process]) -> None:
    """Read every process's CPU time from ``/proc`` into ``seen`` (a process that went meanwhile is skipped)."""
    for folder in Path("/proc").iterdir():
        if not folder.name.isdigit():
            continue
        try:
            stat = (folder / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            ppid, cpu, started = int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[19]) / TICK
            key = (int(folder.name), started)
            # Read again each time: a child read between its fork and its exec still had its parent's command line.
            command = (folder / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()[:300]
            if key not in seen:
                seen[key] = Process(key[0], ppid, started, command, 0.0)
            seen[key].cpu_s = cpu / TICK
            seen[key].command = command or seen[key].command  # a zombie's is empty
            if seen[key].test is None:  # also read until its exec: before, the environment is its parent's
                seen[key].test = started_under((folder / "environ").read_bytes())
        except (OSError, ValueError, IndexError):
            continue


def started_under(environ: bytes) -> str | None:
    """The test named by a process's environment (``PYTEST_CURRENT_TEST``, without its phase), or None.

    pytest sets it in the worker's ``os.environ``, which the processes a test starts inherit; a fork without an
    exec (a zygote's worker, a multiprocessing child) shows the environment its parent was started with."""
    for entry in environ.split(b"\0"):
        if entry.startswith(b"PYTEST_CURRENT_TEST="):
            return entry.split(b"=", 1)[1].decode(errors="replace").rsplit(" (", 1)[0]
    return None


def busy_cpu_s() -> float:
    """The machine's CPU-seconds not idle since boot (``/proc/stat``)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / TICK


def account(command: list[str], cwd: Path = ROOT) -> tuple[int, float, float, list[Process]]:
    """Run ``command``, reading ``/proc`` meanwhile: (its exit status, wall seconds, the machine's busy CPU-seconds,
    every process it started, its children's children included)."""
    seen: dict[tuple[int, float], Process] = {}
    done = threading.Event()

    def poll() -> None:
        while not done.wait(INTERVAL_S):
            read_processes(seen)

    reader = threading.Thread(target=poll, daemon=True)
    busy, wall = busy_cpu_s(), time.monotonic()
    reader.start()
    try:
        with subprocess.Popen(command, cwd=cwd) as running:
            root = running.pid
            status = running.wait()
    finally:
        done.set()
        reader.join()
    read_processes(seen)
    busy, wall = busy_cpu_s() - busy, time.monotonic() - wall
    return status, wall, busy, descendants(root, list(seen.values()))


def descendants(root: int, processes: list[Process]) -> list[Process]:
    """``root`` and the processes below it, by the parent each had when first read (one whose parent had already
    gone, adopted by init, is not counted: a daemon's double fork, say)."""
    family: list[Process] = []
    pids = {root}
    for process in sorted(processes, key=lambda process: process.started):
        if process.pid == root or process.ppid in pids:
            family.append(process)
            pids.add(process.pid)
    return family


def kinds(processes: list[Process]) -> list[dict]:
    """CPU by kind, most first: a zygote's forks (which keep its command line) count as compile workers."""
    count: collections.Counter[str] = collections.Counter()
    cpu: collections.Counter[str] = collections.Counter()
    holding: dict[int, Process] = {}  # pid -> the process that held it last (a pid is reused)
    for process in sorted(processes, key=lambda process: process.started):
        kind = kind_of(process.command)
        parent = holding.get(process.ppid)
        if kind == "zygote" and parent is not None and parent.command == process.command:
            kind = "compile worker (forked)"
        count[kind] += 1
        cpu[kind] += process.cpu_s
        holding[process.pid] = process
    everything = sum(cpu.values()) or 1.0
    rows = [
        {"kind": kind, "processes": count[kind], "cpu_s": round(cpu[kind], 1), "share": round(cpu[kind] / everything, 3)}
        for kind in count
    ]
    return sorted(rows, key=lambda row: -row["cpu_s"])


def cpu_by_test(processes: list[Process], most: int = 25) -> list[dict]:
    """The tests whose own processes (not the pytest worker running them) took the most CPU, most first.

    The browser tests' Jupyter kernels are the JupyterLab server's children, so they count for the test
    that started the server (the first browser test)."""
    count: collections.Counter[str] = collections.Counter()
    cpu: collections.Counter[str] = collections.Counter()
    for process in processes:
        if process.test and kind_of(process.command) != "pytest":
            count[process.test] += 1
            cpu[process.test] += process.cpu_s
    return [{"test": test, "processes": count[test], "cpu_s": round(seconds, 1)} for test, seconds in cpu.most_common(most)]


def table(rows: list[dict]) -> str:
    lines = [f"{'kind':40} {'processes':>9} {'CPU-s':>8} {'share':>6}"]
    lines += [f"{row['kind']:40} {row['processes']:9d} {row['cpu_s']:8.1f} {row['share']:6.1%}" for row in rows]
    return "\n".join(lines)


def git_commit() -> str | None:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=HERE / "results" / "test_suite.json")
    parser.add_argument("command", nargs="*", help="what to run (after --); default: the suite as make test runs it")
    options = parser.parse_args(argv)
    command = options.command or SUITE
    status, wall, busy, processes = account(command)
    rows = kinds(processes)
    report = {
        "format": 1,
        "command": command,
        "exit_status": status,
        "wall_s": round(wall, 1),
        "busy_cpu_s": round(busy, 1),
        "seen_cpu_s": round(sum(process.cpu_s for process in processes), 1),
        "cpus": os.cpu_count(),
        "processes": len(processes),
        "kinds": rows,
        "tests": cpu_by_test(processes),
        "commit": git_commit(),
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(report, indent=1) + "\n")
    print(table(rows))
    for row in report["tests"]:
        print(f"{row['cpu_s']:8.1f} CPU-s in {row['processes']:4d} processes  {row['test']}")
    print(f"{len(processes)} processes, {report['seen_cpu_s']} CPU-s seen of {report['busy_cpu_s']} busy, "
          f"{report['wall_s']} s wall on {report['cpus']} CPUs; exit status {status}")  # fmt: skip
    return status


if __name__ == "__main__":
    sys.exit(main())
