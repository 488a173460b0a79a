"""TileLab's temporary folders carry their maker's pid: those of a notebook kernel that was killed before it could
remove them go when the next process makes one of that kind."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from tilelab.scratch import scratch, scratch_dir


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
