"""Nsight Compute: parsing its CSV (real captured output, CPU) and profiling a kernel end to end (GPU)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tilelang
import tilelang.language as T
from kernels import flash_attention, matmul, two_kernels
from python_child import process_ends

from tilelab.counters.ncu import ProfilerUnavailableError, ncu_command, ncu_refusal, parse_ncu_csv, profile

DATA = Path(__file__).parent / "data"

# The documented refusal, as ncu prints it (quoted in e.g. deepseek-ai/DeepGEMM issue #46); not captured here.
REFUSED = (
    "==PROF== Connected to process 9012 (/usr/bin/python3)\n"
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
    "the target device 0. For instructions on enabling permissions and to get more information see "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
    "==PROF== Disconnected from process 9012\n"
)


def metric(frame, section: str, name: str):
    (row,) = frame[(frame.section == section) & (frame.metric == name)].itertuples()
    return row


def test_a_real_ncu_details_report_becomes_one_row_per_metric():
    frame = parse_ncu_csv((DATA / "ncu_gemm_h100_details.csv").read_text())

    assert list(frame.columns) == ["id", "kernel", "section", "metric", "value", "unit", "text"]
    assert set(frame.kernel) == {"gemm_kernel"} and set(frame.id) == {0}
    assert set(frame.section) == {
        "GPU Speed Of Light Throughput",
        "Memory Workload Analysis",
        "Launch Statistics",
        "Occupancy",
    }
    duration = metric(frame, "GPU Speed Of Light Throughput", "Duration")
    assert (duration.value, duration.unit) == (22.21, "us")
    assert metric(frame, "GPU Speed Of Light Throughput", "Elapsed Cycles").value == 32315  # "32,315"
    assert metric(frame, "Launch Statistics", "Registers Per Thread").value == 230
    assert metric(frame, "Occupancy", "Theoretical Occupancy").value == 12.5


def test_text_values_are_kept_as_text_and_rules_are_kept_apart():
    frame = parse_ncu_csv((DATA / "ncu_gemm_h100_details.csv").read_text())

    no_data = metric(frame, "Memory Workload Analysis", "Local Memory Spilling Request Overhead")
    assert math.isnan(no_data.value) and no_data.text == "no data"
    assert metric(frame, "Launch Statistics", "Cluster Scheduling Policy").text == "PolicySpread"
    rules = frame.attrs["rules"]
    assert [r["rule"] for r in rules] == ["SOLBottleneck", "LaunchConfiguration", "TheoreticalOccupancy"]
    assert rules[1]["estimated_speedup"] == 51.52 and "64 blocks" in rules[1]["description"]


def test_csv_printed_to_stdout_is_found_after_the_profilers_and_programs_own_lines():
    frame = parse_ncu_csv((DATA / "ncu_gemm_h100_stdout.csv").read_text())

    assert len(frame) == 10
    duration = metric(frame, "GPU Speed Of Light Throughput", "Duration")
    assert (duration.value, duration.unit) == (22400, "ns")


def test_text_without_a_csv_header_is_a_value_error():
    with pytest.raises(ValueError, match="no ncu CSV header"):
        parse_ncu_csv("==PROF== Connected to process 1\n")


def test_the_ncu_command_profiles_only_the_kernels_own_launches(tmp_path):
    command = ncu_command("ncu", ["gemm_kernel", "gemm_kernel_1"], tmp_path / "report", ["python", "job.py"])

    assert command[:4] == ["ncu", "--export", str(tmp_path / "report"), "--force-overwrite"]
    assert command.count("--section") == 6 and {"LaunchStats", "SourceCounters"} <= set(command)
    assert "regex:^(gemm_kernel|gemm_kernel_1)$" in command
    assert command[command.index("--launch-count") + 1] == "2" and command[-2:] == ["python", "job.py"]


def test_refused_counters_are_one_line_that_says_what_to_do():
    message = ncu_refusal(REFUSED)

    assert "ERR_NVGPUCTRPERM" in message and "\n" not in message
    assert ncu_refusal("==PROF== Disconnected from process 1\n") is None


def test_profiling_something_that_is_not_a_compiled_kernel_says_what_to_pass():
    with pytest.raises(TypeError, match="compiled TileLang kernel"):
        profile(matmul)


@pytest.fixture(scope="module")
def compiled_gemm():
    """The GEMM compiled for sm_90a: no GPU needed until it runs."""
    from tvm.target import Target

    target = Target({"kind": "cuda", "arch": "sm_90a"})
    with target:
        return tilelang.compile(matmul.get_tir(M=256, N=256, K=256), out_idx=[-1], target=target)


def test_without_ncu_profiling_is_one_clear_line(compiled_gemm, monkeypatch):
    monkeypatch.setattr("tilelab.counters.ncu.find_tool", lambda name: None)

    with pytest.raises(ProfilerUnavailableError, match="ncu \\(Nsight Compute\\) not found") as raised:
        profile(compiled_gemm)
    assert "\n" not in str(raised.value)


def test_a_kernel_that_hangs_under_ncu_is_stopped_at_the_timeout_with_one_clear_line(compiled_gemm, monkeypatch, tmp_path):
    # This ncu starts a program that never ends, as the program of a kernel that hangs would not.
    fake = tmp_path / "ncu"
    fake.write_text(f'#!/bin/sh\nsleep 600 & echo $! > "{tmp_path}/program.pid"\nwait\n')
    fake.chmod(0o755)
    monkeypatch.setattr("tilelab.counters.ncu.find_tool", lambda name: str(fake))

    with pytest.raises(ProfilerUnavailableError, match="did not finish under ncu within 2 s") as raised:
        profile(compiled_gemm, timeout=2)

    assert "\n" not in str(raised.value)
    assert process_ends(int((tmp_path / "program.pid").read_text()))  # gone with ncu


@pytest.mark.gpu
def test_profiling_the_gemm_gives_speed_of_light_and_ptxas_registers():
    import torch

    from tilelab.machine.build import machine_code

    kernel = matmul(1024, 1024, 1024)
    a = torch.randn(1024, 1024, dtype=torch.float16, device="cuda")
    b = torch.randn(1024, 1024, dtype=torch.float16, device="cuda")

    frame = profile(kernel, a, b)

    assert metric(frame, "GPU Speed Of Light Throughput", "Duration").value > 0
    registers = metric(frame, "Launch Statistics", "Registers Per Thread").value
    major, minor = torch.cuda.get_device_capability()
    built = machine_code(kernel.get_kernel_source(), f"sm_{major}{minor}")
    assert registers == built.resources["gemm_kernel"].registers


@pytest.mark.gpu
def test_profiling_the_gemm_summarises_it_with_its_roofline_position():
    import torch

    kernel = matmul(1024, 1024, 1024)

    summary = profile(kernel).attrs["summary"]

    (gemm,) = summary.kernels
    assert summary.device == torch.cuda.get_device_name()
    assert gemm.roofline.flops == 2 * 1024**3  # the static estimate, from tilelang's Analyzer
    assert gemm.roofline.achieved_flops_per_s == pytest.approx(2 * 1024**3 / gemm.duration_s)
    assert 0 < gemm.roofline.flops_percent < 100 and 0 < gemm.roofline.bytes_percent < 100


@pytest.mark.gpu
def test_an_explored_record_given_the_profile_of_its_compiled_kernel_places_the_samples_as_the_readme_says():
    import tilelab
    from tilelab.counters.stalls import place_samples

    record = tilelab.explore(matmul, 1024, 1024, 1024)  # its machine code: TileLab's nvcc build of the same CUDA

    record = record.with_profile(tilelab.profile(matmul(1024, 1024, 1024)).attrs["summary"])

    (kernel,) = record.profile.kernels
    placed = place_samples(record, kernel)
    assert kernel.sampled > 0 and placed.unplaced == ""
    assert sum(line.samples for line in placed.by_cell_line) == kernel.sampled


@pytest.mark.gpu
def test_profiling_flash_attention_with_generated_inputs():
    kernel = flash_attention(seq_len=1024)

    frame = profile(kernel)

    assert set(frame.section) >= {"GPU Speed Of Light Throughput", "Occupancy", "Launch Statistics"}
    assert metric(frame, "Occupancy", "Theoretical Occupancy").value > 0
    ((name, (sampled,)),) = frame.attrs["samples"].items()  # the source page: a launch's samples per SASS instruction
    (attention,) = frame.attrs["summary"].kernels
    assert name == attention.kernel and attention.samples == sampled and attention.sampled > 0


@pytest.mark.gpu
def test_two_device_kernels_each_get_their_own_warp_samples_placed_on_their_own_sass():
    import tilelab
    from tilelab.counters.stalls import place_samples
    from tilelab.machine.build import machine_code_for

    kernel = two_kernels()
    frame = profile(kernel)

    assert set(frame.attrs["samples"]) == {"main_kernel", "main_kernel_1"}  # a table per kernel in ncu's source page
    record = tilelab.explore(two_kernels)
    record = record.with_machine_code(machine_code_for(record, kernel=kernel)).with_profile(frame.attrs["summary"])
    placed = [place_samples(record, launch) for launch in record.profile.kernels]
    assert [launch.kernel for launch in record.profile.kernels] == ["main_kernel", "main_kernel_1"]
    assert all(found is None or (found.unplaced == "" and found.by_cell_line) for found in placed)


def test_the_profiled_program_ends_with_the_notebook_kernel_that_asked_for_it(tmp_path):
    # ncu runs in a session of its own: a restarted notebook kernel's signal reaches neither it nor the program it
    # profiles, which may hang on the GPU; the program watches the notebook's process instead.
    os.mkfifo(tmp_path / "kernel.json")  # reading it blocks: a program that would never end
    notebook = subprocess.Popen(["sleep", "600"])
    program = subprocess.Popen([sys.executable, "-m", "tilelab.counters.run", str(tmp_path), str(notebook.pid)])
    try:
        notebook.kill()
        notebook.wait()
        assert program.wait(timeout=60) == 1
    finally:
        program.kill()
        program.wait()


@tilelang.jit(out_idx=[-1])
def spin(threads=32):
    """A kernel that never ends in practice: 2**62 dependent multiply-adds a thread."""

    @T.prim_func
    def spinning(A: T.Tensor((threads,), T.float32), B: T.Tensor((threads,), T.float32)):
        with T.Kernel(1, threads=threads) as _:
            tx = T.get_thread_binding()
            acc = T.alloc_local((1,), T.float32)
            acc[0] = A[tx]
            for _i in T.serial(2**31 - 1):
                for _j in T.serial(2**31 - 1):
                    acc[0] = acc[0] * 1.0000001 + 1.0
            B[tx] = acc[0]

    return spinning


def _profiled_programs() -> set[int]:
    """The processes running a kernel under ncu for :func:`profile`."""
    found = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if b"tilelab.counters.run" in cmdline.read_bytes():
                found.add(int(cmdline.parent.name))
        except OSError:  # it ended meanwhile
            pass
    return found


@pytest.mark.gpu
def test_a_kernel_that_hangs_on_the_gpu_is_stopped_at_the_timeout_and_leaves_no_process_behind():
    before = _profiled_programs()

    with pytest.raises(ProfilerUnavailableError, match="did not finish under ncu within 90 s"):
        profile(spin(), timeout=90)

    deadline = time.monotonic() + 30
    while _profiled_programs() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _profiled_programs() - before
