"""Row sums through TileLang's reducers, the deprecated v1 one and the epoch TileLang now asks for (lowered without a
GPU). A file of their own: a test's Explorer shows the whole file a kernel lives in (tests/kernels.py)."""

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def row_sum(M=1024, N=1024, block_M=128, block_N=128, threads=256):
    """Row sums through ``T.alloc_reducer(replication=...)`` (TileLang's deprecated v1 reducer, a ``tl.PartialFragment``
    layout), finalized in place."""
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float16), Out: T.Tensor((M,), T.float32)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bm:
            acc = T.alloc_reducer(block_M, T.float32, replication="all")
            T.clear(acc)
            for bn in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
                tile = T.alloc_fragment((block_M, block_N), T.float16)
                T.copy(A[bm * block_M, bn * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    acc[i] += tile[i, j]
            T.finalize_reducer(acc)
            T.copy(acc, Out[bm * block_M])

    return main


@tilelang.jit(out_idx=[-1])
def row_sum_epoch(M=1024, N=1024, block_M=128, block_N=128, threads=256):
    """Row sums through a reducer epoch, as TileLang now asks: ``T.reducer_init``, ``T.reducer_update`` in the loop,
    ``T.finalize_reducer(acc, sums)`` into a fragment of its own."""
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float16), Out: T.Tensor((M,), T.float32)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bm:
            acc = T.alloc_reducer(block_M, T.float32, op="sum")
            sums = T.alloc_fragment(block_M, T.float32)
            T.reducer_init(acc)
            for bn in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
                tile = T.alloc_fragment((block_M, block_N), T.float16)
                T.copy(A[bm * block_M, bn * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    T.reducer_update(acc[i], tile[i, j])
            T.finalize_reducer(acc, sums)
            T.copy(sums, Out[bm * block_M])

    return main
