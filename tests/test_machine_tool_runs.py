"""How TileLab runs the CUDA tools of a machine-code build: beside the notebook, not inside its interrupts, and
never leaving a process or a temporary file behind. The nvcc here is a shell script on PATH that says what it saw."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from python_child import process_ends, start_python, wait_until

from tilelab.machine.build import build, find_tool, machine_code

_VERSION = 'case "$1" in --version) echo "Cuda compilation tools, release 13.0, V13.0.0"; exit 0;; esac\n'
TINY = 'extern "C" __global__ void add_one(float* x) { x[threadIdx.x] += 1.0f; }\n'


@pytest.fixture
def fake_nvcc(tmp_path, monkeypatch):
    """Put an nvcc (and a ptxas beside it) first on PATH whose body is the test's; returns a function that writes it.

    The script may write to ``$SEEN``, a folder of its own, what it wants the test to read."""
    bin_dir, seen = tmp_path / "bin", tmp_path / "seen"
    bin_dir.mkdir()
    seen.mkdir()
    (bin_dir / "ptxas").write_text("#!/bin/sh\nexit 0\n")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("SEEN", str(seen))

    def write(body: str) -> Path:
        for tool in ("nvcc", "ptxas"):
            script = bin_dir / tool
            script.write_text(f"#!/bin/sh\n{_VERSION}{body}\n" if tool == "nvcc" else script.read_text())
            script.chmod(0o755)
        find_tool.cache_clear()
        return seen

    yield write
    find_tool.cache_clear()


def test_nvcc_runs_outside_the_notebooks_process_group_so_an_interrupt_of_another_cell_spares_it(fake_nvcc, tmp_path):
    # Jupyter interrupts a kernel by signalling its whole process group; a build running beside the interrupted cell
    # must not be in it.
    seen = fake_nvcc('cat /proc/$$/stat > "$SEEN/stat"')
    (tmp_path / "build").mkdir()
    build(TINY, "sm_90a", tmp_path / "build", line_info=False)
    fields = (seen / "stat").read_text().rpartition(")")[2].split()
    process_group, session = int(fields[2]), int(fields[3])
    assert process_group != os.getpgrp()
    assert session != os.getsid(0)


def test_a_build_that_times_out_stops_nvcc_with_all_it_started_and_its_temporary_files_stay_in_the_build(
    fake_nvcc, tmp_path
):
    # Killed alone, a real nvcc leaves its cicc compiling on and its tmpxft files in /tmp.
    seen = fake_nvcc('sleep 600 & echo $! > "$SEEN/pid"; echo half-written > "$TMPDIR/tmpxft_0000_kernel.ii"; wait')
    (tmp_path / "build").mkdir()
    with pytest.raises(subprocess.TimeoutExpired):
        build(TINY, "sm_90a", tmp_path / "build", line_info=False, timeout=1)
    assert process_ends(int((seen / "pid").read_text()))
    assert (tmp_path / "build" / "tmp" / "tmpxft_0000_kernel.ii").exists()


def test_a_killed_notebook_kernel_takes_the_nvcc_of_its_background_build_with_it(fake_nvcc, tmp_path):
    # The build's nvcc leads a session of its own (above), so the kernel's end does not reach it by itself.
    seen = fake_nvcc('echo $$ > "$SEEN/nvcc"; sleep 600 & echo $! > "$SEEN/cicc"; wait')
    (tmp_path / "build").mkdir()
    kernel = start_python(f"""
import threading
from tilelab.machine.build import build
threading.Thread(target=build, args=({TINY!r}, "sm_90a", {str(tmp_path / "build")!r}), kwargs={{"line_info": False}},
                 daemon=True).start()
threading.Event().wait()
""")
    try:
        assert wait_until(lambda: (seen / "cicc").exists())
    finally:
        kernel.kill()  # as an out-of-memory kill, or a restart past its grace time
        kernel.wait()

    assert process_ends(int((seen / "nvcc").read_text())) and process_ends(int((seen / "cicc").read_text()))


def test_the_record_of_a_build_that_timed_out_says_so_and_leaves_no_files(fake_nvcc, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # where a stray temporary file would land
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    fake_nvcc('echo half-written > "$TMPDIR/tmpxft_0000_kernel.ii"; exec sleep 600')
    machine = machine_code(TINY, "sm_90", resources_only=True, timeout=1, cache=False)
    assert machine.error.startswith("timed out after 1 s: ")
    assert machine.error.endswith("/nvcc")
    assert list((tmp_path / "tmp").iterdir()) == []
