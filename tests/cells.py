"""Cell sources the magic, nbconvert and browser tests run: one GEMM, one softmax, one small CUDA kernel, one CPU kernel,
each written once."""

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


def softmax_cell(magic: str | None = None) -> str:
    """A row softmax over fp32 rows (``T.reduce_max`` then ``T.reduce_sum``); ``magic`` prepends a ``%%tilelang`` line."""
    header = f"%%tilelang {magic}\n" if magic is not None else "\n"
    return header + """import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def softmax(M=8192, N=1024, block_M=4, threads=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            X_local = T.alloc_fragment((block_M, N), T.float32)
            row_max = T.alloc_fragment((block_M,), T.float32)
            row_sum = T.alloc_fragment((block_M,), T.float32)
            T.copy(X[bx * block_M, 0], X_local)
            T.reduce_max(X_local, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                X_local[i, j] = T.exp(X_local[i, j] - row_max[i])
            T.reduce_sum(X_local, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                X_local[i, j] = X_local[i, j] / row_sum[i]
            T.copy(X_local, Y[bx * block_M, 0])
    return main
"""


def cpu_cell(name: str = "doubled", factor: str = "2.0", configs: str = "", comment: str = "") -> str:
    """A CPU-dialect kernel ``name`` (``Out = A * factor``) whose ``@tilelang.jit`` names ``target="c"``, for
    ``ip.run_cell_magic`` (no magic line); ``configs`` continues the decorator's arguments, ``comment`` ends the loop line."""
    return f"""import tilelang
import tilelang.cpu.language as C

@tilelang.jit(target="c", out_idx=[-1]{configs})
def {name}(N=256, block=32):
    @C.prim_func
    def main(A: C.Tensor((N,), "float32"), Out: C.Tensor((N,), "float32")):
        with C.Kernel(C.ceildiv(N, block)) as bx:
            for i in C.serial(block):{comment}
                Out[bx * block + i] = A[bx * block + i] * {factor}
    return main
"""


def fill_cell(name: str = "filled") -> str:
    """A small CUDA kernel ``name`` (one block of 128 threads sets 128 floats to 1.0), for ``ip.run_cell_magic``."""
    return f"""import tilelang
import tilelang.language as T

@tilelang.jit
def {name}(M=128):
    @T.prim_func
    def main(A: T.Tensor((M,), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(M):
                A[i] = 1.0
    return main
"""
