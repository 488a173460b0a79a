"""The machine code TileLab records is the code TileLang itself built and loads.

TileLang's compile (nvcc through its kernel cache, no GPU needed to build) puts
the cubin inside the kernel's shared library; TileLab builds its own from the
same CUDA source. Registers and stack must agree.
"""

from __future__ import annotations

import pytest
from kernels import matmul

import tilelab
from tilelab import _tilelang as tl
from tilelab.machine import cubin_resource_usage, cubins_in_library
from tilelab.targets import resolve_target


def _registers_tilelang_built(choice, tmp_path, **config) -> dict[str, dict[str, int]]:
    func, options = tl.elaborate(matmul, (), config, choice.tvm_target())
    jit_kernel = tl.compile_cached(func, options, choice)
    library = tmp_path / "kernel.so"
    jit_kernel.export_library(str(library))
    (cubin,) = cubins_in_library(library)
    (tmp_path / "kernel.cubin").write_bytes(cubin)
    return cubin_resource_usage(tmp_path / "kernel.cubin")


def _assert_same(loaded: dict[str, dict[str, int]], record) -> None:
    assert loaded and set(loaded) == set(record.machine_code.resources)
    for name, resources in record.machine_code.resources.items():
        assert loaded[name]["REG"] == resources.registers, name
        assert loaded[name]["STACK"] == resources.stack_frame, name


def test_the_registers_tilelab_reports_are_those_of_the_cubin_tilelang_built(tmp_path):
    config = {"M": 512, "N": 512, "K": 512}
    record = tilelab.explore(matmul, arch="sm_80", **config)

    _assert_same(_registers_tilelang_built(resolve_target("sm_80"), tmp_path, **config), record)


@pytest.mark.gpu
def test_on_a_gpu_a_compiled_records_registers_are_those_tilelang_loaded(tmp_path):
    record = tilelab.explore(matmul)  # the present GPU: compiled, not lowered
    assert record.mode.value == "compiled"

    _assert_same(_registers_tilelang_built(resolve_target(), tmp_path), record)
