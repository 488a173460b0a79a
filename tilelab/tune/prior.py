"""A static prior over a CUDA space: which configs a search tries first, read from the elaborated kernel alone.

Elaborating a config (running the kernel's Python body into TIR: no lowering, no
nvcc) takes 0.01–0.15 s. Three facts of it order the configs:
1. fragment words per thread (:func:`tilelab._tilelang.fragment_words_per_thread`)
   over :data:`FRAGMENT_WORDS_LIMIT`: it spills, or comes close, so it goes last;
2. fewest global bytes issued by the blocks (tilelang's Analyzer: each block loads
   its own tiles, so fewer bytes is more reuse of each tile);
3. most fragment words per thread (the most work a thread holds while it fits).

Against the H200 grid tables of ``bench/results/search.json`` (which also set the limit,
so this is calibration, not yet evidence that it carries to other kernels): on the
36-config GEMM the first four configs of this order hold both configs within 2 % of
the grid's best, on the 16-config FlashAttention its first two hold the best.
A config that fails to elaborate, or whose counts are not constants, is not ranked.
Large spaces are ranked on a seeded sample of :data:`SAMPLE` configs; the ranking
runs in a daemon thread and what it has after :data:`DEADLINE_S` is used, so a
config whose elaboration hangs cannot hang the sweep (its compile worker times it out).
"""

from __future__ import annotations

import random
import threading
from typing import Any

from tilelab import _tilelang as tl

__all__ = ["DEADLINE_S", "FRAGMENT_WORDS_LIMIT", "SAMPLE", "static_order"]

# Of a thread's 255 registers some 50 go to addresses, indices and loop state. A heuristic, set from the two
# measured spaces (bench/results/search.json, H200): their fastest configs hold 128 (GEMM) and 163
# (FlashAttention) words per thread; a 229-word attention config ran 1.33x the best, GEMMs of 256 words and more 2.8-18x.
FRAGMENT_WORDS_LIMIT = 200
SAMPLE = 64  # configs ranked at most
DEADLINE_S = 20.0


def static_order(kernel: Any, args: tuple, fixed: dict, todo: list[tuple[int, dict]], choice: Any, seed: int | None) -> list[int]:
    """The indices of ``todo``'s configs that the prior ranks, best first (empty for a CPU target)."""
    if not choice.is_cuda:
        return []
    picked = todo if len(todo) <= SAMPLE else random.Random(seed).sample(todo, SAMPLE)
    keys: list[tuple[tuple, int]] = []
    ranking = threading.Thread(target=_rank, args=(kernel, args, fixed, picked, choice, keys), daemon=True)
    ranking.start()
    ranking.join(DEADLINE_S)
    return [index for _, index in sorted(keys.copy())]  # a copy: a ranking past its deadline may still append


def _rank(kernel: Any, args: tuple, fixed: dict, picked: list[tuple[int, dict]], choice: Any, keys: list) -> None:
    target = choice.tvm_target()
    for index, config in picked:
        try:
            func, _ = tl.elaborate(kernel, args, {**fixed, **config}, target)
            words = tl.fragment_words_per_thread(func)
            issued = tl.tile_op_counts(func).global_bytes
        except Exception:  # a config that does not elaborate is the compile workers' to report
            continue
        if words is None or not isinstance(issued, int):
            continue
        keys.append(((words > FRAGMENT_WORDS_LIMIT, issued, -words, index), index))
