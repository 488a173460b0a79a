"""On a GPU: the machine code TileLab records for a compiled kernel is the code TileLang itself loaded."""

from __future__ import annotations

import pytest
from kernels import matmul

import tilelab
from tilelab.machine import cubin_resource_usage

pytestmark = pytest.mark.gpu


def _cuda_modules(module) -> list:
    found = [module] if module.kind == "cuda" else []
    for imported in module.imports:
        found += _cuda_modules(imported)
    return found


def test_a_compiled_kernels_registers_match_the_cubin_tilelang_loaded(tmp_path):
    record = tilelab.explore(matmul)  # the present GPU: compiled, not lowered
    assert record.mode.value == "compiled" and record.machine_code.available

    jit_kernel = matmul.compile()
    (cuda_module,) = _cuda_modules(jit_kernel.artifact.rt_mod)
    cubin = tmp_path / "tilelang.cubin"
    cuda_module.write_to_file(str(cubin), "cubin")
    loaded = cubin_resource_usage(cubin)

    assert loaded and set(loaded) == set(record.machine_code.resources)
    for name, resources in record.machine_code.resources.items():
        assert loaded[name]["REG"] == resources.registers, name
        assert loaded[name]["STACK"] == resources.stack_frame, name
