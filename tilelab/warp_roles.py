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
warps and get no role here (:data:`ALL_WARPS` where samples are counted by role).
"""

from __future__ import annotations

import re

__all__ = ["ALL_WARPS", "CONSUMER", "PRODUCER", "warp_roles"]

PRODUCER = "producer"
CONSUMER = "consumer"
ALL_WARPS = "all"  # what the samples of a warp-specialised kernel count a line outside its split as

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
            for role, branch in zip(named, (first, second), strict=True):
                roles.update(dict.fromkeys(branch, role))
        index = end + 1
    return roles


def _branches(lines: list[str], at: int) -> tuple[range, range, int] | None:
    """The 1-based lines inside the ``if`` block opening at index ``at`` and inside its ``else`` block, and the index
    of the else block's closing line."""
    close = _closing(lines, at)
    if close is None or not _ELSE.match(lines[close]):
        return None
    end = _closing(lines, close)
    if end is None:
        return None
    return range(at + 2, close + 1), range(close + 2, end + 1), end


def _closing(lines: list[str], at: int) -> int | None:
    """The index of the line holding the ``}`` that closes the block whose ``{`` ends line ``at``."""
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


def _name(lines: list[str], first: range, second: range) -> tuple[str, str] | None:
    """(role of the first branch, role of the second), or None when the branches don't read as a producer and consumers."""

    def reads(branch: range) -> tuple[bool, bool]:
        text = "\n".join(lines[line - 1] for line in branch)
        return bool(_LOADS.search(text)), bool(_MATH.search(text))

    (loads_1, math_1), (loads_2, math_2) = reads(first), reads(second)
    if loads_1 and not math_1 and math_2:
        return PRODUCER, CONSUMER
    if loads_2 and not math_2 and math_1:
        return CONSUMER, PRODUCER
    return None
