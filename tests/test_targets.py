"""Where a kernel compiles for, and why one is lowered only: no GPU here, or a GPU of another arch."""

from __future__ import annotations

import json

import pytest
from kernels import matmul
from sample_records import sample_record

from tilelab.capture import compile_kernel
from tilelab.errors import cannot_run
from tilelab.records import KernelRecord
from tilelab.targets import TargetChoice, resolve_target
from tilelab.views.overview.data import overview_data

# What resolve_target("sm_80") answers on an H200 (tests/test_gpu_magic.py asks a real GPU).
ANOTHER_ARCH = TargetChoice({"kind": "cuda", "arch": "sm_80"}, "sm_80", False, lowered_because="the GPU, NVIDIA H200, is sm_90a")


def status_of(record: KernelRecord) -> str:
    return next(row["text"] for row in overview_data(record)["rows"] if row["label"] == "status")


def test_without_a_gpu_a_cuda_kernel_is_lowered_because_there_is_none():
    from conftest import cuda_available

    if cuda_available():
        pytest.skip("a GPU is present")
    choice = resolve_target("sm_80")

    assert (choice.runnable, choice.lowered_because) == (False, "no GPU")
    assert str(cannot_run("--bench", choice)).startswith("--bench needs a CUDA GPU and none is visible here; ")


def test_a_kernel_lowered_for_another_arch_than_the_gpus_says_why_in_its_record_its_overview_and_a_refusal():
    record = compile_kernel(matmul, (), {"M": 256, "N": 256, "K": 256}, ANOTHER_ARCH).record

    loaded = KernelRecord.from_json(record.to_json())

    assert loaded.lowered_only and loaded.lowered_because == "the GPU, NVIDIA H200, is sm_90a"
    assert status_of(loaded) == "lowered only (the GPU, NVIDIA H200, is sm_90a: not runnable here)"
    assert str(cannot_run("--profile", ANOTHER_ARCH)) == (
        "--profile runs the kernels, and they are lowered for sm_80 only (the GPU, NVIDIA H200, is sm_90a); "
        "leave out --arch to compile them for this GPU"
    )


def test_a_record_from_before_format_9_does_not_say_why_it_was_lowered_only():
    payload = json.loads(sample_record().to_json())
    del payload["record"]["lowered_because"]

    loaded = KernelRecord.from_json(json.dumps({**payload, "format": 8}))

    assert loaded.lowered_because == ""
    assert status_of(loaded) == "lowered only (not runnable here)"
