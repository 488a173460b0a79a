"""The kernels the benchmark suite tunes: an fp16 GEMM and a FlashAttention forward.

Both are ordinary ``@tilelang.jit`` kernels (module level, so ``tilelab.tune``
ships them to its compile workers by reference). Compared with the GEMM in
``tests/kernels.py`` this one adds a threadblock swizzle (``T.use_swizzle``:
neighbouring blocks share rows of A and columns of B in L2, which matters once
N reaches 8192-28672). The attention kernel is the online-softmax forward of
``tests/kernels.py`` with fast math on (``TL_ENABLE_FAST_MATH``, as TileLang's
own Hopper attention examples compile it). A hand-written ``order`` / ``stage``
schedule on ``T.Pipelined`` (the ``wgmma_pipelined`` example's) lowers to the
very same CUDA for sm_90a in 0.1.15 as the inferred pipeline (checked: identical
source), so the kernel leaves scheduling to TileLang and tunes ``num_stages``.

The module is named ``suite_kernels`` rather than ``kernels`` so that it never
shadows ``tests/kernels.py`` on a shared ``sys.path``. No ``from __future__ import
annotations``: TileLang evaluates the ``T.Tensor(shape, ...)`` annotations.
"""


import tilelang
import tilelang.language as T

__all__ = ["flash_attention", "matmul"]


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=256, block_K=64, num_stages=3, threads=256, swizzle=10):
    """``C = A @ B``: fp16 inputs, fp32 accumulation, fp16 output; ``swizzle=0`` turns rasterisation off."""
    dtype, accum_dtype = T.float16, T.float32

    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.use_swizzle(panel_size=max(swizzle, 1), enable=swizzle > 0)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


@tilelang.jit(out_idx=[3], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def flash_attention(batch, heads, seq_len, dim, is_causal, block_M=128, block_N=128, num_stages=2, threads=256):
    """Attention forward over ``[batch, seq, heads, dim]`` fp16 tensors (softmax scale ``1/sqrt(dim)``)."""
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # log2(e): exp2 instead of exp
    shape = [batch, seq_len, heads, dim]
    dtype, accum_dtype = T.float16, T.float32

    @T.prim_func
    def attention(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype), Output: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            O_shared = T.alloc_shared([block_M, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_M], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_M], accum_dtype)
            scores_scale = T.alloc_fragment([block_M], accum_dtype)
            scores_sum = T.alloc_fragment([block_M], accum_dtype)
            logsum = T.alloc_fragment([block_M], accum_dtype)

            T.copy(Q[bz, bx * block_M : (bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))
            loop_range = T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N)) if is_causal else T.ceildiv(seq_len, block_N)
            for k in T.Pipelined(loop_range, num_stages=num_stages):
                # S = Q K^T; the causal mask is S's initial value
                T.copy(K[bz, k * block_N : (k + 1) * block_N, by, :], K_shared)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(acc_s.dtype))
                else:
                    T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                # online softmax: running max, rescale factor, exponentials, running sum
                T.copy(scores_max, scores_max_prev)
                T.fill(scores_max, -T.infinity(accum_dtype))
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)
                # rescale the running output, then O += P V
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]
                T.copy(V[bz, k * block_N : (k + 1) * block_N, by, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, bx * block_M : (bx + 1) * block_M, by, :])

    return attention
