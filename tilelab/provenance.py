"""Where a compiled kernel came from, and what TileLang's cache key for it was made of: plain data.

A :class:`Provenance` says who served a compile (TileLab's cell cache,
TileLang's in-memory cache, TileLang's disk cache with the entry's path, or a
fresh compile with its seconds) and keeps the key's components
(:class:`KeyComponents`): the values where they are short (target, pass
configs, compile flags, TileLang version) and hashes where they are long (the
printed TIR TileLang hashes, the PrimFunc's structural hash, the kernel's
source as a syntax tree). :func:`tilelab.why` compares two of them; the
kernel's own source text (:class:`KernelSource`) locates a change at a cell
line and makes a reproducer standalone.

Like the records, this module imports nothing heavy and knows nothing of views.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import textwrap
import tokenize
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

__all__ = [
    "COMPONENTS",
    "PROVENANCE_COLUMNS",
    "CacheSource",
    "KernelSource",
    "KeyComponents",
    "Provenance",
    "build_provenance",
    "digest",
    "key_components",
    "source_digest",
    "target_words",
]

# The components a row of the tuning DataFrame names (``key_<name>``), in the order "why" reports them.
COMPONENTS = ("tir", "target", "pass_configs", "compile_flags", "options", "tilelang", "source")
PROVENANCE_COLUMNS = ("cache", "cache_entry", "cache_key", *(f"key_{name}" for name in COMPONENTS))


class CacheSource(str, Enum):
    """Who served a compile."""

    CELL = "cell"  # TileLab's %%tilelang cell cache: the cell was unchanged, nothing compiled
    MEMORY = "memory"  # TileLang's in-process kernel cache
    DISK = "disk"  # TileLang's disk cache (``entry`` is the path)
    FRESH = "fresh"  # compiled now (``seconds``)


_SERVED_TEXT = {
    CacheSource.CELL: "TileLab cell cache",
    CacheSource.MEMORY: "TileLang memory cache",
    CacheSource.DISK: "TileLang disk cache",
    CacheSource.FRESH: "compiled fresh",
}


def digest(value: Any) -> str:
    """A short, stable hash (12 hex digits) of ``value``'s canonical JSON."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class KernelSource:
    """The kernel's Python: the whole file (or cell) that defined it, and the lines of its function there."""

    file: str  # the file name, or a cell's pseudo-file (``<tilelang-cell-…>``)
    text: str
    first_line: int  # 1-based, inclusive
    last_line: int

    @property
    def function_lines(self) -> list[str]:
        return self.text.splitlines()[self.first_line - 1 : self.last_line]


@dataclass(frozen=True)
class KeyComponents:
    """What TileLang's kernel-cache key of one compile was made of, each component kept.

    ``tir`` is the SHA-256 of the elaborated PrimFunc as TileLang prints it (what
    its key hashes: names included); ``tir_structure`` its structural hash (names
    ignored), so a change of names alone can be told apart. ``source`` hashes the
    kernel's Python as a syntax tree (comments and layout ignored): TileLang does
    not key on it, TileLab keeps it to explain a changed TIR.
    """

    tir: str
    tir_structure: str
    target: str  # the resolved target, as TileLang prints it into its key
    target_host: str
    pass_configs: dict[str, str] = field(default_factory=dict)  # normalised keys, values as repr
    compile_flags: tuple[str, ...] = ()
    out_idx: str = ""
    execution_backend: str = ""
    tilelang_version: str = ""
    source: str = ""

    def digests(self) -> dict[str, str]:
        """Every component of :data:`COMPONENTS` hashed (12 hex digits)."""
        return {
            "tir": digest(self.tir),
            "target": digest([self.target, self.target_host]),
            "pass_configs": digest(self.pass_configs),
            "compile_flags": digest(list(self.compile_flags)),
            "options": digest([self.out_idx, self.execution_backend]),
            "tilelang": digest(self.tilelang_version),
            "source": digest(self.source),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KeyComponents:
        return cls(**{**data, "compile_flags": tuple(data.get("compile_flags", ()))})


@dataclass(frozen=True)
class Provenance:
    """Who served one compile, TileLang's key for it and the key's components.

    ``key`` and ``entry`` are TileLang's cache key and its disk entry's path
    (empty when the kernel did not elaborate); ``in_disk_cache`` says whether
    that entry existed when the compile ran.
    """

    served_by: CacheSource
    seconds: float | None = None  # compile (or load) seconds
    key: str = ""
    entry: str = ""
    in_disk_cache: bool = False
    components: KeyComponents | None = None
    source: KernelSource | None = None

    def served_from(self, where: CacheSource) -> Provenance:
        """The same compile, shown again from ``where`` (a cell-cache hit)."""
        return replace(self, served_by=where)

    def text(self) -> str:
        """One line: who served it and the key's components, e.g. ``compiled fresh in 0.42 s · key 3f2a… (TIR 9ab1…, …)``."""
        served = _SERVED_TEXT[self.served_by]
        if self.served_by is CacheSource.FRESH and self.seconds is not None:
            served += f" in {self.seconds:.2f} s"
        if self.served_by is CacheSource.DISK and self.entry:
            served += f" ({self.entry})"
        if self.served_by is CacheSource.FRESH and self.in_disk_cache:
            served += " (TileLang's disk cache also holds this key)"
        if self.components is None:
            return f"{served} · no key: the kernel did not elaborate"
        parts = self.components
        digests = parts.digests()
        flags = " ".join(parts.compile_flags) or "none"
        described = (
            f"TIR {digests['tir']}, target {target_words(parts.target)}, {len(parts.pass_configs)} pass config"
            f"{'' if len(parts.pass_configs) == 1 else 's'}, flags {flags}, tilelang {parts.tilelang_version}, "
            f"source {digests['source']}"
        )
        return f"{served} · key {self.key[:12] or '?'} ({described})"

    def columns(self) -> dict[str, Any]:
        """The tuning row's :data:`PROVENANCE_COLUMNS`."""
        digests = self.components.digests() if self.components is not None else {}
        return {
            "cache": self.served_by.value,
            "cache_entry": self.entry or None,
            "cache_key": self.key or None,
            **{f"key_{name}": digests.get(name) for name in COMPONENTS},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Provenance:
        components, source = data.get("components"), data.get("source")
        return cls(
            **{
                **data,
                "served_by": CacheSource(data["served_by"]),
                "components": None if components is None else KeyComponents.from_dict(components),
                "source": None if source is None else KernelSource(**source),
            }
        )


def build_provenance(
    served_by: CacheSource | str,
    seconds: float | None,
    key: Any = None,
    source: tuple[str, str, int, int] | None = None,
    in_disk_cache: bool = False,
) -> Provenance:
    """A :class:`Provenance` from TileLang's key (a ``tilelab._tilelang.CacheKey``, None when the kernel did not
    elaborate) and the kernel's source lines (``tilelab._tilelang.kernel_source_lines``)."""
    kernel_source = KernelSource(*source) if source is not None else None
    components = key_components(key.parts, key.tir_structure, kernel_source) if key is not None else None
    return Provenance(
        CacheSource(served_by), seconds, key.key if key is not None else "", key.entry if key is not None else "",
        in_disk_cache, components, kernel_source,
    )  # fmt: skip


def target_words(target: str) -> str:
    """``cuda sm_90`` from a target's JSON (what TileLang prints), else the text itself."""
    try:
        spec = json.loads(target)
    except (TypeError, ValueError):
        return target
    if not isinstance(spec, dict):
        return target
    return " ".join(str(spec[name]) for name in ("kind", "arch") if spec.get(name))


def key_components(parts: dict[str, Any], tir_structure: str, source: KernelSource | None) -> KeyComponents:
    """The components of TileLang's key data ``parts`` (as ``tilelab._tilelang.cache_key`` reports it)."""
    flags = parts.get("compile_flags")
    return KeyComponents(
        tir=str(parts.get("func", "")),
        tir_structure=tir_structure,
        target=str(parts.get("target", "")),
        target_host=str(parts.get("target_host") or ""),
        pass_configs={str(k): repr(v) for k, v in sorted((parts.get("pass_configs") or {}).items())},
        compile_flags=(flags,) if isinstance(flags, str) else tuple(str(flag) for flag in flags or ()),
        out_idx=json.dumps(parts.get("out_idx")),
        execution_backend=str(parts.get("execution_backend", "")),
        tilelang_version=str(parts.get("version", "")),
        source=source_digest(source) if source is not None else "",
    )


def source_digest(source: KernelSource) -> str:
    """A hash of the kernel function's syntax tree: comments, blank lines and layout do not count."""
    text = textwrap.dedent("\n".join(source.function_lines))
    try:
        normal = ast.dump(ast.parse(text))
    except SyntaxError:  # lines that do not parse alone (an odd indentation): their tokens, comments dropped
        normal = " ".join(_code_tokens(text))
    return hashlib.sha256(normal.encode()).hexdigest()


def _code_tokens(text: str) -> list[str]:
    skipped = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    try:
        return [token.string for token in tokenize.generate_tokens(io.StringIO(text).readline) if token.type not in skipped]
    except (tokenize.TokenError, SyntaxError):
        return text.split()
