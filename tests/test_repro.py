"""Reproducers: one standalone Python file per kernel that people without TileLab can run, with what was observed."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from sample_records import EVIL, sample_record

import tilelab
from tilelab.cli.main import main
from tilelab.provenance import CacheSource, KernelSource, Provenance
from tilelab.repro import error_signatures, kernel_module_text

# Runs a reproducer as a fresh interpreter would, with TileLab unimportable (sys.modules[name] = None makes
# every `import tilelab` fail).
WITHOUT_TILELAB = "import runpy, sys; sys.modules['tilelab'] = None; sys.argv = [{path!r}]; runpy.run_path({path!r}, run_name='__main__')"

CPU_KERNEL = """import tilelang
import tilelang.cpu.language as C

SCALE = {scale}


@tilelang.jit(target="c", out_idx=[-1])
def scaled(N=512, block=64):
    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            for i in C.serial(block):
                Out[bx * block + i] = A[bx * block + i] * SCALE
    return main
"""

MIXED_GEMM = """import tilelang
import tilelang.language as T


@tilelang.jit
def bad_gemm(M=128):
    @T.prim_func
    def main(A: T.Tensor((M, M), T.float16), B: T.Tensor((M, M), T.float32), C: T.Tensor((M, M), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            As = T.alloc_shared((64, 32), T.float16)
            Bs = T.alloc_shared((32, 64), T.float32)
            Cl = T.alloc_fragment((64, 64), T.float32)
            T.clear(Cl)
            T.copy(A[0, 0], As)
            T.copy(B[0, 0], Bs)
            T.gemm(As, Bs, Cl)
            T.copy(Cl, C[0, 0])
    return main
"""


def run_reproducer(path: Path, cache: Path) -> subprocess.CompletedProcess:
    # A fresh interpreter where ``import tilelab`` fails (the snippet blocks it), and no path leads to this
    # checkout; where tilelang itself comes from PYTHONPATH (the GPU machine's bundle), that path stays.
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and not (Path(p) / "tilelab").exists()]
    env = {**os.environ, "TILELANG_CACHE_DIR": str(cache), "PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.run([sys.executable, "-s", "-c", WITHOUT_TILELAB.format(path=str(path))], cwd=path.parent, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def imported_modules(text: str) -> set[str]:
    tree = ast.parse(text)
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return names | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}


def kernel_of(tmp_path: Path, module: str, text: str, name: str):
    (tmp_path / f"{module}.py").write_text(text)
    sys.path.insert(0, str(tmp_path))
    try:
        return getattr(__import__(module), name)
    finally:
        sys.path.remove(str(tmp_path))


def test_a_cpu_kernels_reproducer_runs_where_tilelab_cannot_be_imported_and_passes_its_check(tmp_path):
    kernel = kernel_of(tmp_path, "repro_cpu_ok", CPU_KERNEL.format(scale="2.0"), "scaled")
    record = tilelab.explore(kernel, target="c", block=32)
    path = tmp_path / "out" / "repro.py"
    path.parent.mkdir()
    path.write_text(record.reproducer())

    done = run_reproducer(path, tmp_path / "cache")

    assert not any(name.split(".")[0] == "tilelab" for name in imported_modules(path.read_text()))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed: no NaN or Inf in the outputs" in done.stdout
    assert "'block': 32," in path.read_text() and "SCALE = 2.0" in path.read_text()


def test_the_reproducers_check_fails_on_inf_outputs(tmp_path):
    kernel = kernel_of(tmp_path, "repro_cpu_inf", CPU_KERNEL.format(scale="float('inf')"), "scaled")
    path = tmp_path / "out" / "repro.py"
    path.parent.mkdir()
    path.write_text(tilelab.explore(kernel, target="c").reproducer())

    done = run_reproducer(path, tmp_path / "cache")

    assert done.returncode == 1 and "FAILED: output 0 holds NaN or Inf" in done.stdout


def test_a_cuda_compile_errors_reproducer_from_the_command_line_reproduces_the_same_error(tmp_path, capsys):
    (tmp_path / "mixed.py").write_text(MIXED_GEMM)
    path = tmp_path / "out" / "repro_bad_gemm.py"
    path.parent.mkdir()

    code = main(["repro", f"{tmp_path / 'mixed.py'}::bad_gemm", "--arch", "sm_90", "-o", str(path)])
    text = path.read_text()
    done = run_reproducer(path, tmp_path / "cache")

    assert code == 0 and "the lower error it raised" in capsys.readouterr().out
    assert "lower error" in text and "Mixed-dtype GEMM only supports" in text  # what TileLab observed, in the header
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Mixed-dtype GEMM only supports f8f6f4 family operands currently, got A=float16, B=float32" in done.stdout
    assert "REPRODUCED: the error TileLab observed" in done.stdout


def test_the_kernel_comes_with_what_it_needs_from_its_cell_and_nothing_else():
    cell = (
        "%%tilelang --target c\nimport tilelab\nimport tilelang\nimport numpy as np\nfrom helpers import unused\n"
        "WIDTH = 4\nBLOCK = WIDTH * 16\nresult = tilelab.tune(k, block=tilelab.choices([1, 2]))\n\n"
        "@tilelang.jit\ndef k(block=BLOCK):\n    return block\nprint(result)\n"
    )
    source = KernelSource("<tilelang-cell-abc>", cell, 11, 13)

    text, future = kernel_module_text(source)

    assert text == "import tilelang\n\nWIDTH = 4\n\nBLOCK = WIDTH * 16\n\n@tilelang.jit\ndef k(block=BLOCK):\n    return block\n"
    assert not future


def test_what_was_observed_cannot_break_the_file_and_a_name_that_is_not_python_is_refused():
    record = replace(
        sample_record(),
        name="gemm",
        latency_ms=0.25,
        device_name=f'H100 """ {EVIL}\n import os',
        provenance=Provenance(CacheSource.FRESH, 0.1, source=KernelSource(f"<cell {EVIL}>", "def gemm(M=1):\n    return M\n", 1, 2)),
    )

    text = record.reproducer()

    ast.parse(text)  # a hostile device name stays inside its comment
    assert "#   latency 0.25 ms" in text and "# ---- the kernel, from <cell </script>" in text
    with pytest.raises(ValueError, match="is not a Python name"):
        replace(record, name=f"gemm{EVIL}").reproducer()


def test_the_error_is_recognised_without_tilelabs_hint_or_the_exception_name():
    signatures = error_signatures("InternalError: Check failed: shape mismatch on A_shared (at T.copy)")

    assert "shape mismatch on A_shared" not in signatures  # whole phrases only
    assert "Check failed: shape mismatch on A_shared" in signatures
    assert "InternalError: Check failed: shape mismatch on A_shared (at T.copy)" in signatures


@pytest.mark.gpu
def test_a_compiled_cuda_gemms_reproducer_runs_on_the_gpu_and_passes_its_check(tmp_path):
    from cells import gemm_cell

    kernel = kernel_of(tmp_path, "gemm_module", gemm_cell(size=512, block=64), "matmul")
    record = tilelab.explore(kernel, machine_code=False)
    path = tmp_path / "out" / "repro.py"
    path.parent.mkdir()
    path.write_text(record.reproducer())

    done = run_reproducer(path, tmp_path / "cache")

    assert not record.lowered_only and "'run': True," in path.read_text()
    assert done.returncode == 0 and "passed: no NaN or Inf in the outputs" in done.stdout, done.stdout + done.stderr
