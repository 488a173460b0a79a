"""Cell sources the magic, nbconvert and browser tests run: one GEMM, written once."""

from __future__ import annotations


def gemm_cell(size: int = 1024, block: int = 128, stages: int = 3, magic: str | None = None) -> str:
    """A classic TileLang GEMM cell (``size``³ fp16, ``block``×``block``×32 tiles); ``magic`` prepends a ``%%tilelang`` line."""
    header = f"%%tilelang {magic}\n" if magic is not None else "\n"
    return header + f'''import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def matmul(M={size}, N={size}, K={size}, block_M={block}, block_N={block}, block_K=32):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages={stages}):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return gemm
'''
