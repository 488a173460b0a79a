"""Why did it recompile? What changed, among what TileLang keys its kernel cache on, between two compiles.

:func:`why` compares the :class:`~tilelab.provenance.Provenance` of two
records (or the key columns of two tuning rows): the TIR TileLang hashes, the
target, the pass configs, the compile flags, ``out_idx`` and the execution
backend, the TileLang version. A changed TIR is explained where the records
can say why: the first changed line of the kernel's source (located at its
cell or file line; comments and layout do not count), or the arguments it was
elaborated with. A change that alters nothing in the key (a comment, a renamed
local) says so.
"""

from __future__ import annotations

import difflib
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Any

from tilelab.provenance import COMPONENTS, CacheSource, KernelSource, KeyComponents, target_words

__all__ = ["KeyChange", "WhyRecompiled", "why"]

_NOT_KNOWN = "why: not known (a record from an older TileLab, or a kernel that did not elaborate)"
_LABELS = {"tir": "TIR", "target": "target", "pass_configs": "pass configs", "compile_flags": "compile flags",
           "options": "out_idx or execution backend", "tilelang": "TileLang version", "source": "source"}  # fmt: skip
_TOKEN = re.compile(r"\d+\.\d*(?:e[+-]?\d+)?|\w+|[^\w\s]")


@dataclass(frozen=True)
class KeyChange:
    """One changed component: ``in_key`` when TileLang keys on it, else it only explains (the source, the arguments)."""

    component: str  # one of tilelab.provenance.COMPONENTS, or "arguments"
    text: str  # e.g. "pass config tl.disable_warp_specialized False → True"
    in_key: bool = True
    line: int | None = None  # the file (cell) line of the first difference, when located


@dataclass(frozen=True)
class WhyRecompiled:
    """What changed from one compile to the next among what TileLang keys on; see :func:`why`."""

    name: str
    served_by: str  # who served the second compile (a tilelab.provenance.CacheSource value), "" when unknown
    changes: tuple[KeyChange, ...] = ()
    known: bool = True  # False: one of the two carries no key components

    @property
    def key_changed(self) -> bool:
        return any(change.in_key for change in self.changes)

    def text(self) -> str:
        """One line: ``recompiled: …`` naming each changed component, or ``cache hit: nothing that TileLang keys on changed``."""
        if not self.known:
            return _NOT_KNOWN
        if self.key_changed:
            return "recompiled: " + "; ".join(change.text for change in self.changes if change.in_key)
        hit = self.served_by in (CacheSource.CELL.value, CacheSource.MEMORY.value, CacheSource.DISK.value)
        explained = [change.text for change in self.changes if not change.in_key]
        tail = f" ({'; '.join(explained)})" if explained else ""
        return f"{'cache hit' if hit else 'same key'}: nothing that TileLang keys on changed{tail}"

    def __str__(self) -> str:
        return self.text()


def why(before: Any, after: Any) -> WhyRecompiled:
    """What changed from ``before`` to ``after`` among what TileLang keys its cache on.

    Parameters
    ----------
    before, after
        Two :class:`~tilelab.records.KernelRecord` (their ``provenance``), or two
        :class:`~tilelab.tune.result.TuneRow` (their ``key_*`` columns: which
        components changed, without their values).

    Returns
    -------
    WhyRecompiled
        ``.changes`` names each changed component; ``.text()`` is the one line the
        Explorer shows under "since the last run".
    """
    if hasattr(before, "provenance") and hasattr(after, "provenance"):
        return _why_records(before, after)
    return _why_rows(before, after)


def _why_rows(before: Any, after: Any) -> WhyRecompiled:
    served = getattr(after, "cache", None) or ""
    digests = [{name: getattr(row, f"key_{name}", None) for name in COMPONENTS} for row in (before, after)]
    if not all(digests[0].values()) or not all(digests[1].values()):
        return WhyRecompiled(getattr(after, "label", lambda: "")(), served, known=False)
    changed = [name for name in COMPONENTS if digests[0][name] != digests[1][name]]
    changes = tuple(KeyChange(name, f"{_LABELS[name]} changed", in_key=name != "source") for name in changed)
    return WhyRecompiled(after.label(), served, changes)


def _why_records(before: Any, after: Any) -> WhyRecompiled:
    first, second = before.provenance, after.provenance
    served = second.served_by.value if second is not None else ""
    if first is None or second is None or first.components is None or second.components is None:
        return WhyRecompiled(after.name, served, known=False)
    a, b = first.components, second.components
    source = _source_change(first.source, second.source) if a.source != b.source else None
    arguments = _argument_changes(before.arguments, after.arguments)
    changes = [*_tir_change(a, b, source, arguments), *_value_changes(a, b)]
    if source is not None and not any(change.component == "tir" for change in changes):
        changes.append(KeyChange("source", f"the source changed{_at(source)}, not the TIR", in_key=False, line=source[0]))
    return WhyRecompiled(after.name, served, tuple(changes))


def _tir_change(a: KeyComponents, b: KeyComponents, source: tuple | None, arguments: list[str]) -> list[KeyChange]:
    if a.tir == b.tir:
        return []
    if source is not None:
        return [KeyChange("tir", f"TIR changed (first difference{_at(source)})", line=source[0])]
    if arguments:
        return [KeyChange("tir", f"TIR changed (arguments: {', '.join(arguments)})")]
    if a.tir_structure == b.tir_structure:
        return [KeyChange("tir", "TIR changed: names only (the same structure)")]
    return [KeyChange("tir", "TIR changed")]


def _at(source: tuple[int, str, str]) -> str:
    line, where, detail = source
    return f" at {where} {line}: {detail}"


def _value_changes(a: KeyComponents, b: KeyComponents) -> list[KeyChange]:
    changes = []
    for name in sorted(set(a.pass_configs) | set(b.pass_configs)):
        old, new = a.pass_configs.get(name, "unset"), b.pass_configs.get(name, "unset")
        if old != new:
            changes.append(KeyChange("pass_configs", f"pass config {name} {old} → {new}"))
    if (a.target, a.target_host) != (b.target, b.target_host):
        old, new = target_words(a.target), target_words(b.target)
        changes.append(KeyChange("target", f"target {old} → {new}" if old != new else "target changed (its options or host)"))
    if a.compile_flags != b.compile_flags:
        changes.append(KeyChange("compile_flags", f"compile flags {' '.join(a.compile_flags) or 'none'} → {' '.join(b.compile_flags) or 'none'}"))
    if a.out_idx != b.out_idx:
        changes.append(KeyChange("options", f"out_idx {a.out_idx} → {b.out_idx}"))
    if a.execution_backend != b.execution_backend:
        changes.append(KeyChange("options", f"execution backend {a.execution_backend} → {b.execution_backend}"))
    if a.tilelang_version != b.tilelang_version:
        changes.append(KeyChange("tilelang", f"TileLang {a.tilelang_version} → {b.tilelang_version}"))
    return changes


def _argument_changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return [f"{name} {before.get(name, 'unset')} → {after.get(name, 'unset')}"
            for name in dict.fromkeys([*before, *after]) if before.get(name) != after.get(name)]  # fmt: skip


def _source_change(before: KernelSource | None, after: KernelSource | None) -> tuple[int, str, str] | None:
    """(line in ``after``'s file, "cell line" or "<file> line", what changed) of the first changed code line."""
    if before is None or after is None:
        return None
    old, new = _code_lines(before), _code_lines(after)
    matcher = difflib.SequenceMatcher(None, [text for _, text in old], [text for _, text in new], autojunk=False)
    for tag, i1, _i2, j1, _j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        line = new[j1][0] if j1 < len(new) else after.last_line
        if tag == "delete":
            detail = f"removed {old[i1][1].strip()}"
        elif tag == "insert":
            detail = f"added {new[j1][1].strip()}"
        else:
            detail = _changed_words(old[i1][1], new[j1][1])
        where = "cell line" if after.file.startswith("<") else f"{after.file.rsplit('/', 1)[-1]} line"
        return line, where, detail
    return None


def _code_lines(source: KernelSource) -> list[tuple[int, str]]:
    """(file line, text without its comment) of the function's lines that hold code."""
    lines = source.function_lines
    comments: dict[int, int] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.start[1]
    except (tokenize.TokenError, SyntaxError):
        pass
    code = []
    for number, text in enumerate(lines, 1):
        text = text[: comments[number]] if number in comments else text
        if text.strip():
            code.append((source.first_line + number - 1, text.rstrip()))
    return code


def _changed_words(old: str, new: str) -> str:
    """``num_stages=3 → num_stages=4``: the first differing words of two lines, after the name before them."""
    a, b = list(_TOKEN.finditer(old)), list(_TOKEN.finditer(new))
    matcher = difflib.SequenceMatcher(None, [m.group() for m in a], [m.group() for m in b], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start_a, start_b = _context_start(a, i1), _context_start(b, j1)
        before = old[a[start_a].start() : a[i2 - 1].end()] if i2 > start_a else ""
        after = new[b[start_b].start() : b[j2 - 1].end()] if j2 > start_b else ""
        return f"{before or '(nothing)'} → {after or '(nothing)'}"
    return f"{old.strip()} → {new.strip()}"


def _context_start(tokens: list[re.Match], index: int) -> int:
    """Where the words shown before a difference start: back to the nearest name, at most three tokens, not past
    the start of an argument (``block_K → 64``), and an operand in brackets whole with the name before it
    (``A[bx * block + i] * 2.0``, not ``i] * 2.0``) where that adds at most :data:`_CONTEXT_CHARS` characters."""
    start = index
    while start > max(0, index - 3):
        start -= 1
        word = tokens[start].group()
        if word == ",":  # the difference is an argument of its own: alone
            return start + 1
        if word in _CLOSING.values():  # the first argument: after the name it belongs to (``A[by``)
            return _with_name_before(tokens, start)
        if word in _CLOSING:
            opened = _opening(tokens, start)
            if opened is not None and tokens[start].end() - tokens[opened].start() <= _CONTEXT_CHARS:
                return _with_name_before(tokens, opened)
        if _is_name(word):
            break
    return start


_CLOSING = {")": "(", "]": "[", "}": "{"}
_CONTEXT_CHARS = 40


def _opening(tokens: list[re.Match], closing: int) -> int | None:
    """The index of the bracket that the one at ``closing`` closes; None where the line does not open it."""
    depth = 0
    for position in range(closing, -1, -1):
        word = tokens[position].group()
        if word in _CLOSING:
            depth += 1
        elif word in _CLOSING.values():
            depth -= 1
            if depth == 0:
                return position
    return None


def _with_name_before(tokens: list[re.Match], bracket: int) -> int:
    """The opening bracket at ``bracket``, or the name just before it (``A`` of ``A[``)."""
    return bracket - 1 if bracket > 0 and _is_name(tokens[bracket - 1].group()) else bracket


def _is_name(word: str) -> bool:
    return word[0].isalpha() or word[0] == "_"
