"""The machine code TileLab records is the code TileLang itself built and loads.

TileLang's compile (nvcc through its kernel cache, no GPU needed to build) puts
the cubin inside the kernel's shared library; TileLab builds its own from the
same CUDA source. Registers and stack must agree.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest
from kernels import matmul

import tilelab
from tilelab import _tilelang as tl
from tilelab.capture import compile_kernel, with_machine_code
from tilelab.machine.build import cubin_resource_usage, cubins_in_library, find_tool, machine_code_for
from tilelab.machine.text import presumed_lines
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


@pytest.mark.skipif(find_tool("nvcc") is None, reason="needs nvcc")
def test_a_compiled_kernels_sass_is_that_of_the_cubin_tilelang_built():
    # No GPU needed to build: TileLang compiles (nvcc) and loads its library; only launching needs one.
    compiled = compile_kernel(matmul, (), {}, replace(resolve_target("sm_90a"), runnable=True))
    assert compiled.kernel is not None

    theirs = with_machine_code(compiled.record, compiled.kernel).machine_code
    ours = machine_code_for(compiled.record)

    assert theirs.tools["cubin"].startswith("TileLang's own") and "cubin" not in ours.tools
    assert theirs.sass == ours.sass and theirs.resources == ours.resources and theirs.ptx_links == ours.ptx_links
    # TileLang's line info names cell lines (its #line directives); the twin build's names every CUDA line.
    instructions = sum(sum(counts.values()) for counts in ours.instruction_counts.values())
    assert theirs.sass_links == ours.sass_links and len(theirs.sass_links) == instructions


@pytest.mark.skipif(find_tool("nvcc") is None, reason="needs nvcc")
def test_when_tilelabs_build_differs_from_tilelangs_the_sass_links_come_from_tilelangs_own_line_info():
    compiled = compile_kernel(matmul, (), {}, replace(resolve_target("sm_90a"), runnable=True))
    record = compiled.record

    theirs = machine_code_for(record, kernel=compiled.kernel, ptxas_options=["-O1"], cache=False)  # TileLab's differs

    instructions = sum(sum(counts.values()) for counts in theirs.instruction_counts.values())
    # Through TileLang's #line directives: a cell line that several CUDA lines come from names none of them.
    assert 0.5 * instructions < len(theirs.sass_links) < instructions
    source = record.source.device.splitlines()
    assert all(1 <= link.cuda_line <= len(source) for link in theirs.sass_links)


@pytest.mark.skipif(find_tool("nvcc") is None, reason="needs nvcc")
def test_reading_tilelangs_cubin_logs_nothing_into_the_cell_but_a_users_own_export_still_logs(tmp_path):
    compiled = compile_kernel(matmul, (), {}, replace(resolve_target("sm_90a"), runnable=True))
    logged: list[str] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: logged.append(record.getMessage())
    logger = logging.getLogger("tilelang.jit.kernel")
    logger.addHandler(handler)
    try:
        built = machine_code_for(compiled.record, kernel=compiled.kernel, cache=False)  # exports the library to read it
        assert built.tools["cubin"].startswith("TileLang's own") and logged == []
        compiled.kernel.export_library(str(tmp_path / "mine.so"))
    finally:
        logger.removeHandler(handler)
    assert logged == [f"Kernel library exported to {tmp_path / 'mine.so'}"]


def test_sass_locations_map_back_through_line_directives_unless_ambiguous():
    compiled = (
        "#include <x.h>\n"  # 1
        '#line 16 "/home/me/kernel.py"\n'
        "float a = 0;\n"  # kept 2: kernel.py 16
        "float b = 0;\n"  # kept 3: kernel.py 17
        '#line 16 "/home/me/kernel.py"\n'
        "float c = 0;\n"  # kept 4: kernel.py 16 again (ambiguous)
        '#line 40 "/home/me/kernel.py"\n'
        "c += a;\n"  # kept 5: kernel.py 40
    )

    stripped, line_of = presumed_lines(compiled)

    assert stripped == "#include <x.h>\nfloat a = 0;\nfloat b = 0;\nfloat c = 0;\nc += a;\n"
    assert line_of("/tmp/tvm_kernels.cu", 1) == 1
    assert line_of("/home/me/kernel.py", 17) == 3 and line_of("/home/me/kernel.py", 40) == 5
    assert line_of("/home/me/kernel.py", 16) is None  # two lines presume it: no link rather than a wrong one
    assert line_of("/usr/include/cuda_fp16.hpp", 3) is None
