"""Kernels the tuning tests sweep: a CPU-dialect kernel that runs here, and a CUDA GEMM lowered without a GPU."""

import time

import tilelang
import tilelang.cpu.language as C
import tilelang.language as T

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


@tilelang.jit(out_idx=[-1])
def gemm(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32, threads=128, num_stages=3):
    """The GEMM of TileLang's quickstart (fp16 in, fp32 accumulate)."""
    dtype, accum_dtype = "float16", "float32"

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), Out: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, Out[by * block_M, bx * block_N])

    return main
