"""Kernels the tuning tests sweep: a CPU-dialect kernel that runs here, the CUDA GEMM of ``kernels.py``,
and CPU kernels written into module files of their own (:func:`kernel_module`)."""

import importlib
import sys
import time
from pathlib import Path

import tilelang
import tilelang.cpu.language as C
from kernels import matmul as gemm  # the CUDA GEMM, lowered without a GPU or run on one

__all__ = ["HANG_BLOCK", "SLOW_BLOCK", "gemm", "kernel_module", "scale_add"]

HANG_BLOCK = 96  # elaboration sleeps for this block size: a compile that hangs, as the runner sees it
SLOW_BLOCK = 80  # elaboration takes 3 s more for this one: a compile still running when a quick one has ended


@tilelang.jit(target="c", out_idx=[-1])
def scale_add(N=4096, block=64, chunk=1):
    """``C = 2 * A + B`` in tiles of ``block``; ``block=0`` fails to lower (division by zero)."""
    if block == HANG_BLOCK:
        time.sleep(3600)
    if block == SLOW_BLOCK:
        time.sleep(3)

    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), B: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            acc = C.alloc_local((block,), "float32")
            for i in C.serial(block // chunk):
                for j in C.vectorized(chunk):
                    acc[i * chunk + j] = A[bx * block + i * chunk + j] * 2.0
            for i in C.serial(block):
                Out[bx * block + i] = acc[i] + B[bx * block + i]

    return main


_MODULE = '''
import os, pathlib
import tilelang
import tilelang.cpu.language as C

HERE = pathlib.Path(__file__).parent

@tilelang.jit(target="c", out_idx=[-1])
def {name}(N=960, block=32):
    {body}

    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            for i in C.serial(block):
                Out[bx * block + i] = A[bx * block + i] * 2.0

    return main
'''


def kernel_module(directory: Path, module: str, name: str, body: str = "pass"):
    """``Out = 2 * A``, a CPU kernel ``name`` in its own importable module file (compile workers import
    it by name); ``body`` runs each time it is elaborated (``HERE`` is the module's directory)."""
    (directory / f"{module}.py").write_text(_MODULE.format(name=name, body=body))
    if str(directory) not in sys.path:
        sys.path.insert(0, str(directory))
    return getattr(importlib.import_module(module), name)
