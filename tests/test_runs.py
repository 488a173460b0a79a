"""Runs of a kernel: what an edit changed, comparing any two runs, and edits that change nothing."""

from __future__ import annotations

import time

import pytest
from cells import gemm_cell
from IPython.core.error import UsageError

from tilelab.registry import default_registry
from tilelab.runs import runs_of


def _outputs(ip, line: str, cell: str):
    """The mime bundles a magic call displayed, and its return value."""
    from IPython.core.displaypub import CapturingDisplayPublisher

    publisher, saved = CapturingDisplayPublisher(), ip.display_pub
    ip.display_pub = publisher
    try:
        value = ip.run_cell_magic("tilelang", line, cell)
    finally:
        ip.display_pub = saved
    return [output["data"] for output in publisher.outputs], value


def test_a_second_edit_shows_what_changed_since_the_last_run(ip):
    ip.run_cell_magic("tilelang", "--arch sm_80 --no-machine-code --no-show", gemm_cell(size=512, block=128))
    shown, line = _outputs(ip, "--arch sm_80 --no-machine-code", gemm_cell(size=512, block=64))

    assert "Explorer" in shown[0]["text/plain"]  # the Explorer first, the line under it

    since = line.since
    assert since.name == "matmul" and since.run >= 2
    changes = since.changes
    assert changes.launch == ("gemm_kernel: grid (4, 4, 1) block (128, 1, 1) -> grid (8, 8, 1) block (128, 1, 1)",)
    assert changes.cuda_added > 0 and changes.cuda_removed > 0
    assert "tl.LayoutInference" in changes.passes_changed
    assert "C_local changed" in changes.layouts
    html = line._repr_mimebundle_()["text/html"]
    assert "launch gemm_kernel: grid (4, 4, 1)" in html and "%tilelang diff matmul" in html


def test_diff_compares_the_last_two_runs_or_any_two(ip, capsys):
    ip.run_cell_magic("tilelang", "--arch sm_80 --no-machine-code --no-show", gemm_cell(size=256, block=64, stages=2))
    ip.run_cell_magic("tilelang", "--arch sm_80 --no-machine-code --no-show", gemm_cell(size=256, block=64, stages=3))
    runs = runs_of(default_registry(), "matmul")

    view = ip.run_line_magic("tilelang", "diff matmul")
    assert (view.a.id, view.b.id) == (runs[-2].id, runs[-1].id)
    assert f"run {len(runs) - 1} -> run {len(runs)}" in capsys.readouterr().out

    view = ip.run_line_magic("tilelang", f"diff matmul 1 {len(runs)}")
    assert (view.a.id, view.b.id) == (runs[0].id, runs[-1].id)
    with pytest.raises(UsageError, match="there is no run 99"):
        ip.run_line_magic("tilelang", "diff matmul 1 99")
    with pytest.raises(UsageError, match="no kernel called 'nothing'"):
        ip.run_line_magic("tilelang", "diff nothing")


def test_a_comment_or_whitespace_edit_compiles_nothing(ip):
    cell = gemm_cell(size=384, block=64)
    ip.run_cell_magic("tilelang", "--arch sm_80 --no-machine-code --no-show", cell)
    first = ip.user_ns["matmul_record"]

    edited = cell.replace("T.clear(C_local)", "T.clear(C_local)  # start from zero\n\n   ")
    ip.run_cell_magic("tilelang", "--arch sm_80 --no-machine-code --no-show", edited)

    again = ip.user_ns["matmul_record"]
    assert again.from_cache and again.id == first.id


def test_machine_code_arrives_in_the_background_and_replaces_the_record(ip):
    ip.run_cell_magic("tilelang", "--arch sm_80 --force --no-show", gemm_cell(size=256, block=64, stages=2))
    record = ip.user_ns["matmul_record"]
    assert record.machine_code is None

    deadline = time.monotonic() + 120
    while ip.user_ns["matmul_record"].machine_code is None and time.monotonic() < deadline:
        time.sleep(0.2)

    finished = ip.user_ns["matmul_record"]
    assert finished.id == record.id and finished.machine_code.available
    assert default_registry().get(record.id).machine_code is finished.machine_code
    assert finished.machine_code.summary()["registers"] > 0


def test_profile_without_a_gpu_is_one_line(ip):
    with pytest.raises(UsageError, match="--profile needs a CUDA GPU"):
        ip.run_cell_magic("tilelang", "--profile", gemm_cell(size=256))
