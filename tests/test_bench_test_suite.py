"""bench/bench_test_suite.py: the suite's CPU by kind of process, read from /proc while a command runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import bench_test_suite  # noqa: E402  (bench/ is not a package)
from bench_test_suite import Process, cpu_by_test, kind_of, kinds, started_under  # noqa: E402


def test_command_lines_are_told_apart_by_what_they_run():
    python = "/repo/.venv/bin/python"
    assert kind_of(f"{python} -m ipykernel_launcher -f /tmp/pytest-of-ci/lab0/runtime/kernel-1.json") == "Jupyter kernel"
    assert kind_of(f"{python} -m tilelab.tune.zygote 24 13655") == "zygote"
    assert kind_of(f"{python} -m tilelab report gemm.py::matmul --arch sm_90") == "tilelab CLI"
    assert kind_of("/usr/lib/chromium/chromium --type=renderer --user-data-dir=/tmp/pytest-of-ci/x") == "Chromium"
    assert kind_of("/usr/local/cuda/nvvm/bin/cicc --c++20 kernel.cpp1.ii") == "cicc (nvcc's device compiler)"
    assert kind_of("/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus -quiet -I /repo/tilelang/src kernel.cpp") == "gcc"
    assert kind_of(f"{python} -u -c import sys;exec(eval(sys.stdin.readline()))") == "pytest"
    assert kind_of(f"{python} bench/run_suite.py --smoke --out /tmp/pytest-of-ci/suite0") == "other Python"
    assert kind_of(f"{python} -m pytest -q -n auto tests") == "pytest"
    assert kind_of("/usr/local/cuda/bin/nvcc --cubin -O3 -Xptxas -v -o kernel.cubin kernel.cu") == "nvcc"
    assert kind_of("/usr/bin/make test") == "make"


def test_a_zygotes_forks_count_as_compile_workers_and_kinds_come_most_cpu_first():
    zygote = "python -m tilelab.tune.zygote 24 100"
    seen = [
        Process(pid=100, ppid=1, started=1.0, command="python -m pytest", cpu_s=2.0),
        Process(pid=200, ppid=100, started=2.0, command=zygote, cpu_s=3.0),
        Process(pid=201, ppid=200, started=3.0, command=zygote, cpu_s=0.5),
        Process(pid=202, ppid=200, started=3.5, command=zygote, cpu_s=0.25),
    ]

    assert kinds(seen) == [
        {"kind": "zygote", "processes": 1, "cpu_s": 3.0, "share": 0.522},
        {"kind": "pytest", "processes": 1, "cpu_s": 2.0, "share": 0.348},
        {"kind": "compile worker (forked)", "processes": 2, "cpu_s": 0.8, "share": 0.13},
    ]


def test_a_process_counts_for_the_test_that_started_it_and_the_pytest_worker_for_none():
    environ = b"HOME=/root\0PYTEST_CURRENT_TEST=tests/test_cli.py::test_tune_writes_rows (call)\0LANG=C\0"
    assert started_under(environ) == "tests/test_cli.py::test_tune_writes_rows"
    assert started_under(b"HOME=/root\0") is None

    seen = [
        Process(pid=100, ppid=1, started=1.0, command="python -m pytest", cpu_s=9.0, test="tests/test_a.py::test_x"),
        Process(pid=200, ppid=100, started=2.0, command="python -m tilelab report k.py", cpu_s=2.0, test="tests/test_a.py::test_x"),
        Process(pid=201, ppid=100, started=3.0, command="python -m tilelab tune k.py", cpu_s=5.0, test="tests/test_b.py::test_y"),
        Process(pid=202, ppid=200, started=3.5, command="nvcc --cubin", cpu_s=1.5, test="tests/test_a.py::test_x"),
        Process(pid=203, ppid=1, started=4.0, command="python -m jupyterlab", cpu_s=4.0, test=None),
    ]
    assert cpu_by_test(seen) == [
        {"test": "tests/test_b.py::test_y", "processes": 1, "cpu_s": 5.0},
        {"test": "tests/test_a.py::test_x", "processes": 2, "cpu_s": 3.5},
    ]


def test_a_run_accounts_the_cpu_of_the_processes_its_command_started(tmp_path):
    child = "import time\nwhile time.process_time() < 0.5: pass"
    command = [sys.executable, "-c", f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])"]
    out = tmp_path / "suite.json"

    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_test_suite.py"), "--out", str(out), "--", *command],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["exit_status"] == 0 and report["command"] == command
    (python,) = report["kinds"]
    assert python["kind"] == "other Python" and python["processes"] == 2 and python["cpu_s"] > 0
    assert report["busy_cpu_s"] >= report["seen_cpu_s"] > 0
    assert "other Python" in done.stdout


def test_a_failing_command_gives_its_exit_status():
    status, _, _, _ = bench_test_suite.account([sys.executable, "-c", "raise SystemExit(3)"])

    assert status == 3
