"""TileLab's temporary folders carry their maker's pid: those of a notebook kernel that was killed before it could
remove them go when the next process makes one of that kind. The build files of the compiles TileLab starts go to
the process's own folder, removed when it exits."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from search_kernels import axpy_repeat

import tilelab
from tilelab.records import CompileMode
from tilelab.scratch import process_scratch, scratch, scratch_dir


@pytest.fixture
def temporary(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _ended_pid() -> int:
    ended = subprocess.Popen(["true"])
    ended.wait()
    return ended.pid


def test_the_first_folder_a_process_makes_removes_those_whose_maker_has_ended(temporary):
    killed = temporary / f"tilelab-machine-{_ended_pid()}-abc123"  # its kernel was killed mid-build
    (killed / "nvcc").mkdir(parents=True)
    living = temporary / f"tilelab-machine-{os.getppid()}-def456"
    living.mkdir()
    other_kind = temporary / f"tilelab-worker-{_ended_pid()}-ghi789"
    other_kind.mkdir()

    made = scratch_dir("machine")

    assert not killed.exists() and living.exists() and other_kind.exists()
    assert Path(made).name.startswith(f"tilelab-machine-{os.getpid()}-")


def test_a_scratch_block_removes_its_folder_whatever_it_left(temporary):
    with scratch("ncu") as folder:
        (temporary / folder / "report.ncu-rep").write_text("partial")

    assert list(temporary.iterdir()) == []


def test_a_compile_tilelab_starts_leaves_no_build_files_in_the_temporary_folder(temporary):
    record = tilelab.explore(axpy_repeat, N=96, block=32, machine_code=False)  # TileLang writes tmp*.cpp and tmp*.so

    assert record.ok and record.mode == CompileMode.COMPILED
    assert [path.name for path in temporary.iterdir() if path.name.startswith("tmp")] == []
    assert {path.suffix for path in Path(process_scratch()).iterdir()} >= {".cpp", ".so"}  # the kernel's library
    assert tempfile.tempdir == str(temporary)


def test_the_process_folder_goes_when_its_process_exits_and_not_when_a_forked_child_does(tmp_path):
    script = """
import os, sys
from pathlib import Path
from tilelab.scratch import process_scratch

folder = Path(process_scratch())
(folder / "kernel.so").write_text("a library the process still has loaded")
if os.fork() == 0:
    assert process_scratch() != str(folder)  # the child's own, removed when the child exits
    sys.exit(0)
os.wait()
print(sorted(path.name for path in folder.iterdir()))
"""
    ran = subprocess.run([sys.executable, "-c", script], env={**os.environ, "TMPDIR": str(tmp_path)},
                         capture_output=True, text=True, timeout=120, check=False)

    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "['kernel.so']"  # the child's exit left the parent's folder alone
    assert list(tmp_path.iterdir()) == []
