"""Kernels the tuning tests sweep: a CPU-dialect kernel that runs here, and the CUDA GEMM of ``kernels.py``."""

import time

import tilelang
import tilelang.cpu.language as C
from kernels import matmul as gemm  # the CUDA GEMM, lowered without a GPU or run on one

__all__ = ["HANG_BLOCK", "gemm", "scale_add"]

HANG_BLOCK = 96  # elaboration sleeps for this block size: a compile that hangs, as the runner sees it


@tilelang.jit(target="c", out_idx=[-1])
def scale_add(N=4096, block=64, chunk=1):
    """``C = 2 * A + B`` in tiles of ``block``; ``block=0`` fails to lower (division by zero)."""
    if block == HANG_BLOCK:
        time.sleep(3600)

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
