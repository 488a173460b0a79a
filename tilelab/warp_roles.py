"""Which warps run each line of a warp-specialised kernel's CUDA: the producer's or the consumers'.

On Hopper TileLang splits a pipelined kernel's threads by ``threadIdx.x``: one
branch issues the TMA loads (the producer warps, often after
``warpgroup_reg_dealloc``), the other runs the math (the consumer warps, after
``warpgroup_reg_alloc``)::

    if (((int)threadIdx.x) < 128) {      // producer: tma_load, expect_transaction
      ...
    } else {                             // consumers: wgmma, the epilogue
      ...
    }

A branch is the producer's when it loads (TMA or ``cp.async``) and does no
tensor-core math, the consumers' when it does the math; a split whose two
branches don't read that way is left unnamed. Lines outside a split run on all
warps and get no role.
"""

from __future__ import annotations

import re

__all__ = ["CONSUMER", "PRODUCER", "warp_roles"]

PRODUCER = "producer"
CONSUMER = "consumer"

_SPLIT = re.compile(r"^\s*if \(.*\bthreadIdx\.x\b.*\) \{\s*$")
_ELSE = re.compile(r"^\s*\} else \{\s*$")
_LOADS = re.compile(r"\b(tma_load|tma_load_im2col|cp_async_gs|cp_async_gs_conditional|expect_transaction)\b")
_MATH = re.compile(r"\b(wgmma_\w+|mma_sync|gemm_ss|gemm_rs|gemm_sr|gemm_rr|mma)\b\s*[<(]")


def warp_roles(device: str) -> dict[int, str]:
    """The 1-based lines of ``device`` (TileLang's CUDA) that only the producer or only the consumer warps run."""
    lines = device.splitlines()
    roles: dict[int, str] = {}
    index = 0
    while index < len(lines):
        split = _branches(lines, index) if _SPLIT.match(lines[index]) else None
        if split is None:
            index += 1
            continue
        first, second, end = split
        named = _name(lines, first, second)
        if named is not None:
            for role, (start, stop) in zip(named, (first, second), strict=True):
                roles.update(dict.fromkeys(range(start + 1, stop + 2), role))  # 1-based
        index = end + 1
    return roles


def _branches(lines: list[str], at: int) -> tuple[tuple[int, int], tuple[int, int], int] | None:
    """The 0-based line spans of the ``if`` block opening at ``at`` and of its ``else`` block, and the closing line."""
    close = _closing(lines, at)
    if close is None or not _ELSE.match(lines[close]):
        return None
    end = _closing(lines, close)
    if end is None:
        return None
    return (at + 1, close - 1), (close + 1, end - 1), end


def _closing(lines: list[str], at: int) -> int | None:
    """The line holding the ``}`` that closes the block whose ``{`` ends line ``at``."""
    depth = 0
    for index in range(at, len(lines)):
        text = lines[index][lines[index].rindex("{") :] if index == at else lines[index]
        for char in text:
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return index
    return None


def _name(lines: list[str], first: tuple[int, int], second: tuple[int, int]) -> tuple[str, str] | None:
    """(role of the first branch, role of the second), or None when the branches don't read as a producer and consumers."""

    def reads(span: tuple[int, int]) -> tuple[bool, bool]:
        text = "\n".join(lines[span[0] : span[1] + 1])
        return bool(_LOADS.search(text)), bool(_MATH.search(text))

    (loads_1, math_1), (loads_2, math_2) = reads(first), reads(second)
    if loads_1 and not math_1 and math_2:
        return PRODUCER, CONSUMER
    if loads_2 and not math_2 and math_1:
        return CONSUMER, PRODUCER
    return None
