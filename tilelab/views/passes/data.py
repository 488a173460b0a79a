"""The Passes tab's data, the only code that shapes it: the pass rows (synced state, no IR) and the replies to
the browser's requests (a pass diffed against another, the IR after a pass, a search over every pass's IR).

Diffs carry CodeMirror ``Change`` ranges (character offsets into the two texts)
and the unified diff's hunks, so the live tab and the snapshot show exactly the
diff computed here, with or without whitespace-only differences. The snapshot
draws :func:`passes_data` and :func:`passes_texts`, which are replies the
browser gets to the same requests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tilelab.diffs import ir_at
from tilelab.records import KernelRecord, PassRecord
from tilelab.views._diffdata import DiffData

__all__ = [
    "MAX_HITS",
    "PassesData",
    "first_pass",
    "pass_diff",
    "pass_ir",
    "pass_rows",
    "passes_data",
    "passes_texts",
    "position_of",
    "search_passes",
]

MAX_HITS = 200


def pass_rows(passes: Sequence[PassRecord]) -> list[dict[str, Any]]:
    """The small per-pass rows a pass list shows (no IR text), with the labels both renderings use."""
    return [
        {
            "index": p.index,
            "name": p.name,
            "changed": p.changed,
            "added": p.added,
            "removed": p.removed,
            "delta": f"+{p.added} −{p.removed}" if p.changed else "",
            "ms": round(p.seconds * 1000, 3),
            "time": f"{p.seconds * 1000:.2f} ms",
        }
        for p in passes
    ]


def first_pass(passes: Sequence[PassRecord]) -> int:
    """The pass shown first: the first one after the start that changed the IR (-1: no passes)."""
    changed = [p.index for p in passes[1:] if p.changed]
    return changed[0] if changed else (passes[0].index if passes else -1)


def passes_data(record: KernelRecord) -> dict[str, Any]:
    """The tab's summary, the Explorer widget's ``passes`` trait: ``rows`` and the ``first`` pass to show."""
    return {"rows": pass_rows(record.passes), "first": first_pass(record.passes)}


def position_of(passes: Sequence[PassRecord], index: int) -> int:
    """Position in ``passes`` of the pass whose ``index`` is ``index``."""
    for position, record in enumerate(passes):
        if record.index == index:
            return position
    raise KeyError(
        f"no pass with index {index}; indices run {passes[0].index}..{passes[-1].index}" if passes else "no passes"
    )


def pass_diff(
    passes: Sequence[PassRecord], index: int, base: int | None = None, ignore_whitespace: bool = True
) -> dict[str, Any]:
    """Pass ``index``'s IR diffed against pass ``base`` (default: the pass before it)."""
    position = position_of(passes, index)
    base_position = position - 1 if base is None or base < 0 else position_of(passes, base)
    record = passes[position]
    after = ir_at(passes, position)
    before = ir_at(passes, base_position) if base_position >= 0 else ""
    return {
        "index": record.index,
        "name": record.name,
        "changed": record.changed,
        "base": passes[base_position].index if base_position >= 0 else None,
        "base_name": passes[base_position].name if base_position >= 0 else None,
        "ignore_whitespace": ignore_whitespace,
        **DiffData(before, after, ignore_whitespace).to_dict(),
    }


def pass_ir(passes: Sequence[PassRecord], index: int) -> dict[str, Any]:
    """The IR right after pass ``index``."""
    position = position_of(passes, index)
    return {"index": passes[position].index, "name": passes[position].name, "text": ir_at(passes, position)}


def search_passes(
    passes: Sequence[PassRecord], query: str, regex: bool = False, case: bool = False
) -> dict[str, Any]:
    """The passes whose IR first contains ``query``, adds matches or removes them, with the line to jump to.

    Raises
    ------
    ValueError
        When ``query`` is empty or, with ``regex``, not a valid regular expression.
    """
    if not query:
        raise ValueError("type something to search for in the IR of every pass")
    try:
        pattern = re.compile(query if regex else re.escape(query), 0 if case else re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"{query!r} is not a valid regular expression: {exc}") from None
    hits: list[dict[str, Any]] = []
    previous_count, previous_ir = 0, ""
    for position, record in enumerate(passes):
        ir = ir_at(passes, position)
        count = previous_count if ir == previous_ir else len(pattern.findall(ir))
        if count != previous_count:
            grew = count > previous_count
            kind = "first" if previous_count == 0 and not any(h["kind"] == "first" for h in hits) else (
                "adds" if grew else "removes"
            )
            changed = DiffData(previous_ir, ir, ignore_whitespace=False).changed_lines("b" if grew else "a")
            hits.append(
                {
                    "index": record.index,
                    "name": record.name,
                    "kind": kind,
                    "before": previous_count,
                    "after": count,
                    "side": "b" if grew else "a",
                    "line": _match_line(ir if grew else previous_ir, pattern, changed),
                }
            )
            if len(hits) >= MAX_HITS:
                break
        previous_count, previous_ir = count, ir
    return {"query": query, "regex": regex, "case": case, "hits": hits, "final": previous_count}


def _match_line(text: str, pattern: re.Pattern, prefer: set[int]) -> int | None:
    """The first line of ``text`` with a match, preferring lines in ``prefer`` (the changed ones)."""
    first = None
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.search(line):
            if number in prefer:
                return number
            first = first or number
    return first


class PassesData:
    """Answers the Passes tab's requests (``diff``, ``ir``, ``search``) for one record's passes."""

    def __init__(self, passes: Sequence[PassRecord]) -> None:
        self.passes = tuple(passes)

    def diff(self, content: dict[str, Any]) -> dict[str, Any]:
        """``{"index", "base"?, "ignore_whitespace"?}`` → the two IRs and their changes."""
        base = content.get("base")
        return pass_diff(
            self.passes,
            int(content["index"]),
            None if base is None else int(base),
            bool(content.get("ignore_whitespace", True)),
        )

    def ir(self, content: dict[str, Any]) -> dict[str, Any]:
        """``{"index"}`` → the IR right after that pass."""
        return pass_ir(self.passes, int(content["index"]))

    def search(self, content: dict[str, Any]) -> dict[str, Any]:
        """``{"query", "regex"?, "case"?}`` → the passes where matches first appear, grow or shrink."""
        return search_passes(
            self.passes, str(content.get("query", "")), bool(content.get("regex", False)), bool(content.get("case", False))
        )

    def texts(self) -> dict[str, Any]:
        """What the snapshot draws besides the rows: the replies to ``{"type": "diff", "index": i}`` for every
        pass after the first that changed the IR (``diffs``), and to ``{"type": "ir", "index": last}`` (``final``)."""
        passes = self.passes
        return {
            "diffs": [self.diff({"index": p.index}) for p in passes[1:] if p.changed],
            "final": self.ir({"index": passes[-1].index}) if passes else None,
        }


def passes_texts(record: KernelRecord) -> dict[str, Any]:
    """The snapshot's texts: see :meth:`PassesData.texts`."""
    return PassesData(record.passes).texts()
