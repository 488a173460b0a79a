"""The device code as a block tree: each line's kind, the block around it and its raw ``#line`` link.

:mod:`tilelab.source_map` reads it to tell which directives were emitted for a line and which a line merely
inherited, and which lines a block holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tilelab.records import SourceRecord

__all__ = ["CudaBlocks", "CudaLine"]

SYNC = re.compile(
    r"(\bmbarrier\w*\[.*\]\s*\.\s*\w+\(|__syncthreads\(|__syncwarp\(|\btl::(cp_async_commit|cp_async_wait|fence\w*|"
    r"tma_store_arrive|tma_store_wait|__sync_thread_partial|mbarrier\w*|synchronize\w*)\b)"
)


@dataclass
class CudaLine:
    text: str
    kind: str  # "blank", "pragma", "open", "close", "reopen" (``} else {``), "sync", "stmt"
    parent: int | None  # the line opening the innermost block around this one
    direct: int | None  # the cell line of its #line link (None: none, or outside the cell, or a ``def``)
    run_start: int  # first line of the run of lines sharing its link
    opener: int | None = None  # for ``}`` lines: the line whose block they close


def line_kind(text: str) -> str:
    stripped = text.strip()
    if not stripped:
        return "blank"
    if stripped.startswith("#"):
        return "pragma"
    if stripped.startswith("}"):
        return "reopen" if stripped.endswith("{") else "close"
    if stripped.endswith("{"):
        return "open"
    return "sync" if SYNC.search(stripped) else "stmt"


class CudaBlocks:
    """The device code as a block tree: each line's kind, parent block, and raw ``#line`` link."""

    def __init__(self, source: SourceRecord, untrusted: set[int]) -> None:
        links = {link.output_line: (link.file, link.line) for link in source.line_links}
        self.lines: dict[int, CudaLine] = {}
        self.children: dict[int | None, list[int]] = {}
        self.close_of: dict[int, int] = {}
        stack: list[int] = []
        previous_link, run_start = None, 0
        for number, text in enumerate(source.device.splitlines(), start=1):
            kind = line_kind(text)
            opener = stack.pop() if kind in ("close", "reopen") and stack else None
            if opener is not None:
                self.close_of[opener] = number
            link = links.get(number)
            if kind != "blank" and link != previous_link:
                previous_link, run_start = link, number
            direct = link[1] if link and link[0] == source.kernel_file and link[1] not in untrusted else None
            parent = stack[-1] if stack else None
            self.lines[number] = CudaLine(text, kind, parent, direct, run_start, opener)
            self.children.setdefault(parent, []).append(number)
            if kind in ("open", "reopen"):
                stack.append(number)

    def ancestors(self, number: int) -> list[int]:
        found, parent = [], self.lines[number].parent
        while parent is not None:
            found.append(parent)
            parent = self.lines[parent].parent
        return found

    def inside(self, opener: int) -> range:
        return range(opener + 1, self.close_of.get(opener, max(self.lines) + 1))

    def is_loop(self, number: int) -> bool:
        return self.lines[number].text.strip().startswith("for ")

    def trusted(self, number: int) -> bool:
        """Whether line ``number``'s directive was emitted for it, or for a statement that holds it."""
        line = self.lines[number]
        start = line.run_start
        if line.direct is None:
            return False
        if start == number or start in self.ancestors(number):
            return True
        if self.lines[start].kind == "pragma" and (start + 1 == number or start + 1 in self.ancestors(number)):
            return True  # a pragma's directive covers the loop after it
        return line.kind in ("stmt", "sync") and self.lines[start].parent == line.parent

    def fresh(self, number: int) -> bool:
        """Whether a directive was emitted right at line ``number`` (or at the pragma before it)."""
        start = self.lines[number].run_start
        return self.lines[number].direct is not None and (start == number or (start == number - 1 and self.lines[start].kind == "pragma"))
