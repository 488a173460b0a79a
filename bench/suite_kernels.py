"""The kernels the benchmark suite tunes: an fp16 GEMM and a FlashAttention forward.

Both are ordinary ``@tilelang.jit`` kernels (module level, so ``tilelab.tune``
ships them to its compile workers by reference). Their knobs are the ones that
moved the H200 timings (``bench/notes_vendor_speed.md`` has each step measured):

GEMM. ``epilogue="shared"`` stages the fp16 tile through shared memory and
stores it with TMA (``stmatrix`` + ``cp.async.bulk.tensor``; TileLang reuses the
pipeline's buffers for it under ``ws="auto"``, so it costs no shared memory) instead of 64 scattered
4-byte stores a thread. ``policy`` is the ``T.GemmWarpPolicy`` by name: with two
consumer warpgroups, ``FullRow`` gives each a 64-row slab and one ``m64n256k16``
wgmma per k-step for 128×256 tiles, where ``Square`` splits the columns
(``m64n128``, and ``m64n64`` for 256×128 tiles): more shared-memory reads for
the same work. ``persistent`` launches one block per SM (``sm_count``: 132 on
the H100 and H200) looping over tiles with ``T.Persistent``; the producer
warpgroup then loads the next tile while the consumers store this one (3-6 %
slower than the rasterised grid on the H200, so the suite leaves it out).
``swizzle`` is the rasterisation panel (``T.use_swizzle``) of the
non-persistent grid. ``threads`` counts consumer threads: TileLang adds the
producer warpgroup (256 -> 384 launched). ``ws`` picks TileLang's schedule through its
pass configs, annotated in the kernel (``T.annotate_pass_configs``) so that a config stays a dict of
plain values: ``auto`` (producer/consumer warp specialisation), ``role_based``
(``TL_ENABLE_AUTO_WARP_SPECIALIZATION``) or ``off`` (``TL_DISABLE_WARP_SPECIALIZED``: a cp.async
pipeline, no producer warpgroup). ``split_k > 1`` cuts K into that many slices: one launch writes each
slice's fp32 partial tile to the workspace ``W`` (an input, ``split_k x M x N``; ``gemm_inputs`` makes
it), a second adds the partials in fp32 and rounds to fp16 once, as the unsplit kernel does (only the order
of the additions differs).

Attention. The online-softmax forward, by default with fast math (``TL_ENABLE_FAST_MATH``,
as TileLang's own Hopper attention examples compile it; ``fast_math`` and ``ws`` are pass configs as
for the GEMM). The running maximum
takes the previous maximum into account before it is used, so a row of a
causal tile that is entirely masked (``block_N < block_M``) keeps a finite
maximum instead of giving ``exp2(-inf - -inf) = NaN``. The causal mask is only
built on the tiles that cross the diagonal; the others start from zero like the
non-causal path (where the first wgmma clears the accumulator itself). Causal
q-tiles launch longest first (``heavy_first``), so the grid ends on short blocks. The
``order``/``stage`` schedule of TileLang's ``*_wgmma_pipelined`` example lowers
to the same CUDA as the inferred pipeline under warp specialisation in 0.1.15
(checked: identical source), so the kernel tunes ``num_stages`` only.

The module is named ``suite_kernels`` rather than ``kernels`` so that it never
shadows ``tests/kernels.py`` on a shared ``sys.path``. No ``from __future__ import
annotations``: TileLang evaluates the ``T.Tensor(shape, ...)`` annotations.
"""

import tilelang
import tilelang.language as T
import torch

__all__ = ["flash_attention", "gemm_inputs", "matmul", "pass_configs"]

H100_H200_SMS = 132
REDUCE_TILE = (32, 256)  # the split-K sum: rows x columns a block adds up (256 threads, 32 values each)


def pass_configs(ws: str = "auto", fast_math: bool | None = None) -> dict:
    """TileLang's pass configs for a schedule (``auto``, ``role_based``, ``off``) and fast math (None: unset)."""
    configs: dict = {}
    if ws == "off":
        configs[tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED.value] = True
    elif ws == "role_based":
        configs[tilelang.PassConfigKey.TL_ENABLE_AUTO_WARP_SPECIALIZATION.value] = "role_based"
    elif ws != "auto":
        raise ValueError(f"ws={ws!r}: expected 'auto', 'role_based' or 'off'")
    if fast_math is not None:
        configs[tilelang.PassConfigKey.TL_ENABLE_FAST_MATH.value] = fast_math
    return configs


def gemm_inputs(M, N, K, split_k=1, device="cuda"):
    """Inputs of ``matmul(M, N, K, split_k=...)``: A and B uniform in [-1, 1], and the split-K workspace."""
    a = torch.empty(M, K, dtype=torch.float16, device=device).uniform_(-1.0, 1.0)
    b = torch.empty(K, N, dtype=torch.float16, device=device).uniform_(-1.0, 1.0)
    return [a, b] + ([torch.empty(split_k, M, N, dtype=torch.float32, device=device)] if split_k > 1 else [])


@tilelang.jit(out_idx=[-1])
def matmul(
    M, N, K, block_M=128, block_N=256, block_K=64, num_stages=3, threads=256, swizzle=10,
    policy="FullRow", epilogue="shared", persistent=False, sm_count=H100_H200_SMS, ws="auto", split_k=1,
):  # fmt: skip
    """``C = A @ B``: fp16 inputs, fp32 accumulation, fp16 output (knobs: the module docstring)."""
    dtype, accum_dtype = T.float16, T.float32
    warp_policy = getattr(T.GemmWarpPolicy, policy)
    configs = pass_configs(ws)

    @T.macro
    def tile(A, B, C, A_shared, B_shared, C_local, C_shared, bx, by):
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local, policy=warp_policy)
        if epilogue == "shared":
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])
        else:
            T.copy(C_local, C[by * block_M, bx * block_N])

    if split_k > 1:
        return _matmul_split_k(M, N, K, block_M, block_N, block_K, num_stages, threads, swizzle, warp_policy, configs, split_k)

    if persistent:

        @T.prim_func
        def gemm_persistent(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
            T.annotate_pass_configs(configs)
            with T.Kernel(sm_count, threads=threads) as block:
                A_shared = T.alloc_shared((block_M, block_K), dtype)
                B_shared = T.alloc_shared((block_K, block_N), dtype)
                C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
                C_shared = T.alloc_shared((block_M, block_N), dtype)
                for by, bx in T.Persistent([T.ceildiv(M, block_M), T.ceildiv(N, block_N)], sm_count, block):
                    tile(A, B, C, A_shared, B_shared, C_local, C_shared, bx, by)

        return gemm_persistent

    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        T.annotate_pass_configs(configs)
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            T.use_swizzle(panel_size=max(swizzle, 1), enable=swizzle > 0)
            tile(A, B, C, A_shared, B_shared, C_local, C_shared, bx, by)

    return gemm


def _matmul_split_k(M, N, K, block_M, block_N, block_K, num_stages, threads, swizzle, warp_policy, configs, split_k):
    """Split-K ``matmul``: each of ``split_k`` K-slices to an fp32 partial in ``W``, then one launch sums them."""
    dtype, accum_dtype = T.float16, T.float32
    part = K // split_k  # the space keeps K a multiple of split_k * block_K
    rows, cols = REDUCE_TILE

    @T.prim_func
    def gemm_split_k(
        A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), W: T.Tensor((split_k, M, N), accum_dtype), C: T.Tensor((M, N), dtype)
    ):  # fmt: skip
        T.annotate_pass_configs(configs)
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.use_swizzle(panel_size=max(swizzle, 1), enable=swizzle > 0)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(part, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, bz * part + k * block_K], A_shared)
                T.copy(B[bz * part + k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, policy=warp_policy)
            for i, j in T.Parallel(block_M, block_N):
                W[bz, by * block_M + i, bx * block_N + j] = C_local[i, j]
        with T.Kernel(T.ceildiv(N, cols), T.ceildiv(M, rows), threads=256) as (bx, by):
            total = T.alloc_fragment((rows, cols), accum_dtype)
            T.clear(total)
            for s in T.serial(split_k):
                for i, j in T.Parallel(rows, cols):
                    total[i, j] += W[s, by * rows + i, bx * cols + j]
            T.copy(total, C[by * rows, bx * cols])

    return gemm_split_k


@tilelang.jit(out_idx=[3])
def flash_attention(
    batch, heads, seq_len, dim, is_causal, block_M=128, block_N=128, num_stages=2, threads=256,
    causal_mask="diagonal", heavy_first=True, ws="auto", fast_math=True,
):  # fmt: skip
    """Attention forward over ``[batch, seq, heads, dim]`` fp16 tensors (softmax scale ``1/sqrt(dim)``).

    ``causal_mask="every"`` builds the mask on every key tile and ``heavy_first=False`` launches the
    q-tiles in order (the first version's choices: the same result, more work, a longer tail).
    """
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # log2(e): exp2 instead of exp
    configs = pass_configs(ws, fast_math)
    shape = [batch, seq_len, heads, dim]
    dtype, accum_dtype = T.float16, T.float32

    @T.macro
    def causal_scores(acc_s, bx, k):
        for i, j in T.Parallel(block_M, block_N):
            acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(acc_s.dtype))

    @T.prim_func
    def attention(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype), Output: T.Tensor(shape, dtype)):
        T.annotate_pass_configs(configs)
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (launched, by, bz):
            # causal: the q-tile with the most key tiles starts first, so the grid ends on short blocks, not long ones
            bx = T.ceildiv(seq_len, block_M) - 1 - launched if is_causal and heavy_first else launched
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
                # S = Q K^T; under a causal mask S starts at 0 / -inf on the tiles that cross the diagonal
                T.copy(K[bz, k * block_N : (k + 1) * block_N, by, :], K_shared)
                if is_causal and causal_mask == "every":
                    causal_scores(acc_s, bx, k)
                elif is_causal:
                    if (k + 1) * block_N > bx * block_M:
                        causal_scores(acc_s, bx, k)
                    else:
                        T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow, clear_accum=not is_causal)
                # online softmax: running max (never below the previous one), rescale factor, exponentials, running sum
                T.copy(scores_max, scores_max_prev)
                T.fill(scores_max, -T.infinity(accum_dtype))
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_max[i] = T.max(scores_max[i], scores_max_prev[i])
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
