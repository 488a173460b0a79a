"""The suite's search spaces: every schedule choice TileLang 0.1.15 can express on Hopper, less what cannot run.

GEMM (``suite_kernels.matmul``), per shape (~400-1000 configs; ``gemm_space``):

- tile and consumer threads: 128x256, 256x128, 128x128 and 64x256 (the 256-wide tiles cuBLAS and CUTLASS
  use on Hopper, and narrower ones for more blocks), 128x128 on one warpgroup, 192x128 on three. A
  warpgroup owns 64 rows per wgmma, so threads go with the tile; the fp32 accumulator may take at most
  :data:`ACCUMULATOR_WORDS` registers a thread (TileLang adds a producer warpgroup, and at 384 launched
  threads ptxas gets 168 registers: the rest go to addresses and loop state). 256x256 would need 512
  consumer threads (128 registers each): it spills, so it is not in the space.
- ``block_K`` 32/64/128 and ``num_stages`` 2-5, within :data:`SHARED_LIMIT` of shared memory (the
  epilogue's fp16 tile reuses the pipeline's buffers, except under the role-based schedule, where the
  producer stores it from a buffer of its own: read from the generated CUDA).
- ``swizzle``: the ``T.use_swizzle`` panel, 0 for off.
- ``policy``: ``T.GemmWarpPolicy`` ``FullRow`` (one wide wgmma per warpgroup) or ``Square``; with one
  consumer warpgroup both give the same kernel, so only ``FullRow`` is kept there.
- ``ws``, TileLang's pass configs for the schedule: ``auto`` (its producer/consumer warp specialisation),
  ``role_based`` (``TL_ENABLE_AUTO_WARP_SPECIALIZATION``: separate full/empty barriers per operand, the
  producer also stores C) and ``off`` (``TL_DISABLE_WARP_SPECIALIZED``: a cp.async multistage pipeline).
- ``split_k`` 2 and 4 for the skinny (N <= 1024) and long-K (K >= 16384) shapes: partial products in
  fp32 and a second kernel that adds them (``suite_kernels``).

``k_pack`` is not a choice: in 0.1.15 it is a knob of the ROCm MFMA GEMM only (``tilelang.rocm``).
The register-usage level (``TL_PTXAS_REGISTER_USAGE_LEVEL``) is not either: the GEMM's registers are its
accumulator, which ptxas cannot shrink.

FlashAttention (``suite_kernels.flash_attention``), per problem (~100-250 configs; ``attention_space``):
q-tile and threads (64 on one warpgroup, 128 on two, 192 on three), key tile 32/64/128, 1-3 stages,
``ws`` as above (``off`` and ``role_based`` only without the causal mask: with it, ``off`` fails to lower
and the role-based scheduler declines the if/else, giving the ``auto`` kernel again), fast math on or off
(``TL_ENABLE_FAST_MATH``), and for causal problems which q-tiles launch first. ``T.Pipelined``'s
``order``/``stage`` annotations are not a choice: under warp specialisation they lower to the same CUDA
as the inferred pipeline (``notes_vendor_speed.md``), and without it 0.1.15 rejects them for this loop.

Every config carries every key (``split_k=1`` too), so the best config of one shape is a config of the
next shape's space and the search's warm start can try it.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

__all__ = [
    "ACCUMULATOR_WORDS",
    "BARRIER_BYTES",
    "SHARED_LIMIT",
    "attention_shared_bytes",
    "attention_space",
    "gemm_shared_bytes",
    "gemm_space",
    "smoke_attention_space",
    "smoke_gemm_space",
    "value_counts",
]

SHARED_LIMIT = 227 * 1024  # dynamic shared memory a block may have on the H100 and H200
BARRIER_BYTES = 1024  # the pipeline's mbarriers and alignment, measured above the tiles (ptxas: 145 KiB for 144 of tiles)
ACCUMULATOR_WORDS = 128  # fp32 accumulator registers a consumer thread may hold
GEMM_TILES = [(128, 256, 256), (256, 128, 256), (128, 128, 256), (128, 128, 128), (64, 256, 128), (192, 128, 384)]
GEMM_BLOCK_K = (32, 64, 128)
GEMM_STAGES = (2, 3, 4, 5)
GEMM_SWIZZLE = (0, 4, 10)
GEMM_POLICIES = ("FullRow", "Square")
WS = ("auto", "role_based", "off")
SPLITS = (2, 4)
SKINNY_N, LONG_K = 1024, 16384  # shapes that also get split-K configs
SPLIT_SWIZZLE = 10  # split-K configs keep TileLang's own schedule and one panel: the split is their choice
MIN_K_IN_FLIGHT = 128  # num_stages * block_K: two 64-wide k-steps in flight at least, to hide the loads
ATTENTION_TILES = [(64, 128), (128, 256), (192, 384)]  # (block_M, consumer threads)
ATTENTION_BLOCK_N = (32, 64, 128)
ATTENTION_STAGES = (1, 2, 3)


def gemm_shared_bytes(config: dict[str, Any]) -> int:
    """Shared memory of a ``matmul`` config: the pipeline's fp16 A and B tiles, and the C tile where it has its own."""
    bm, bn, bk = config["block_M"], config["block_N"], config["block_K"]
    pipeline = config["num_stages"] * (bm + bn) * bk * 2
    if config.get("split_k", 1) > 1:
        return pipeline  # the partial products go to global memory from registers
    c_tile = bm * bn * 2
    return pipeline + c_tile if config["ws"] == "role_based" else max(pipeline, c_tile)


def _gemm_runs(config: dict[str, Any], K: int) -> bool:
    words = config["block_M"] * config["block_N"] / config["threads"]
    in_flight = config["num_stages"] * config["block_K"]
    fits = words <= ACCUMULATOR_WORDS and gemm_shared_bytes(config) + BARRIER_BYTES <= SHARED_LIMIT
    return fits and in_flight >= MIN_K_IN_FLIGHT and K % (config["split_k"] * config["block_K"]) == 0


def gemm_space(M: int, N: int, K: int) -> list[dict[str, Any]]:
    """Every ``matmul`` config for an ``M x N x K`` fp16 GEMM that fits the H100/H200 (the module docstring)."""
    configs = []
    for (bm, bn, threads), bk, stages, swizzle, policy, ws in itertools.product(
        GEMM_TILES, GEMM_BLOCK_K, GEMM_STAGES, GEMM_SWIZZLE, GEMM_POLICIES, WS
    ):
        if policy != "FullRow" and threads < 256:
            continue  # one consumer warpgroup: every policy partitions it alike
        config = {"block_M": bm, "block_N": bn, "block_K": bk, "num_stages": stages, "threads": threads,
                  "swizzle": swizzle, "policy": policy, "ws": ws, "split_k": 1}  # fmt: skip
        configs.append(config)
        if (N <= SKINNY_N or K >= LONG_K) and ws == "auto" and swizzle == SPLIT_SWIZZLE:
            configs += [{**config, "split_k": split} for split in SPLITS]
    return [config for config in configs if _gemm_runs(config, K)]


def attention_shared_bytes(config: dict[str, Any], dim: int = 128) -> int:
    """Shared memory of a ``flash_attention`` config: Q, K and V per stage, and O where it has a buffer of its own (fp16).

    Under ``ws="auto"`` TileLang stages O in Q's buffer (Q is dead by then); the role-based schedule keeps them apart
    (read from the generated CUDA), and so does the count for ``off``, which was not read.
    """
    q_tile = config["block_M"] * dim * 2
    own_o = 0 if config["ws"] == "auto" else q_tile
    return q_tile + own_o + config["num_stages"] * 2 * config["block_N"] * dim * 2


def attention_space(seq: int, causal: bool, dim: int = 128) -> list[dict[str, Any]]:
    """Every ``flash_attention`` config for one problem that fits the H100/H200 (the module docstring)."""
    schedules = ("auto",) if causal else WS
    heavy = (True, False) if causal else (True,)
    configs = []
    for (bm, threads), bn, stages, ws, fast_math, heavy_first in itertools.product(
        ATTENTION_TILES, ATTENTION_BLOCK_N, ATTENTION_STAGES, schedules, (True, False), heavy
    ):
        config = {"block_M": bm, "block_N": bn, "num_stages": stages, "threads": threads, "ws": ws,
                  "fast_math": fast_math, "heavy_first": heavy_first}  # fmt: skip
        # a key tile past the sequence's end would enter the softmax (the kernel masks only causally)
        if seq % bn == 0 and attention_shared_bytes(config, dim) + BARRIER_BYTES <= SHARED_LIMIT:
            configs.append(config)
    return configs


def smoke_gemm_space() -> list[dict[str, Any]]:
    """Three configs of the GEMM space that exercise its new kernels: role-based, unspecialised, split-K."""
    base = {"block_M": 128, "block_N": 256, "block_K": 64, "num_stages": 3, "threads": 256, "swizzle": 10,
            "policy": "FullRow", "ws": "role_based", "split_k": 1}  # fmt: skip
    return [base, {**base, "ws": "off", "swizzle": 0, "policy": "Square"}, {**base, "ws": "auto", "split_k": 2, "num_stages": 2}]


def smoke_attention_space() -> list[dict[str, Any]]:
    """One config of the attention space on one warpgroup, the cheapest to lower."""
    return [{"block_M": 64, "block_N": 64, "num_stages": 2, "threads": 128, "ws": "auto", "fast_math": True, "heavy_first": True}]


def value_counts(space: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per knob, how many configs of ``space`` take each value (what the search chooses among)."""
    counts: dict[str, Counter] = {}
    for config in space:
        for name, value in config.items():
            counts.setdefault(name, Counter())[str(value)] += 1
    return {name: dict(sorted(counter.items())) for name, counter in counts.items()}
