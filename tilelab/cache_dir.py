"""TileLang's kernel cache on disk: its entries, their sizes, duplicates, and pruning it when asked.

TileLang keeps one folder per cache key under
``$TILELANG_CACHE_DIR/<version>/<platform>-<machine>/kernels/`` (default
``~/.tilelang/cache``), every TileLang version in its own namespace. Entries
whose generated sources and parameters are identical although their keys
differ are *duplicates*: the same TIR for the same target, filed twice under a
key that changed for a reason that did not matter (tile-ai/tilelang#2662).
:func:`plan_prune` chooses what to remove (duplicates, entries unused for a
while, the least recently used beyond a size) and :func:`remove` removes a
plan's entries: TileLab never deletes without being asked.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from tilelab import _tilelang as tl

__all__ = ["CacheEntry", "CacheListing", "PrunePlan", "list_cache", "parse_age", "parse_size", "plan_prune", "remove"]

_FINGERPRINTED = (*tl.CACHE_SOURCE_FILES, "params.json")  # what makes two entries the same kernel
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass(frozen=True)
class CacheEntry:
    """One folder of TileLang's disk cache."""

    key: str
    path: Path
    namespace: str  # "0.1.15/linux-x86_64": the TileLang version and machine it belongs to
    bytes: int
    used: float  # the latest access or change of its files (epoch seconds)
    fingerprint: str  # a hash of its generated sources and parameters; "" when it has none


@dataclass(frozen=True)
class CacheListing:
    """What TileLang's cache directory holds."""

    directory: Path
    entries: tuple[CacheEntry, ...]

    @property
    def total_bytes(self) -> int:
        return sum(entry.bytes for entry in self.entries)

    def largest(self, count: int = 5) -> list[CacheEntry]:
        return sorted(self.entries, key=lambda entry: -entry.bytes)[:count]

    def duplicates(self) -> list[tuple[CacheEntry, ...]]:
        """Groups of entries with the same generated code under different keys, the most recently used first."""
        groups: dict[tuple[str, str], list[CacheEntry]] = {}
        for entry in self.entries:
            if entry.fingerprint:
                groups.setdefault((entry.namespace, entry.fingerprint), []).append(entry)
        return [tuple(sorted(group, key=lambda e: -e.used)) for group in groups.values() if len(group) > 1]

    def lines(self, now: float | None = None) -> list[str]:
        """The listing as text: where, how much, the largest entries and the duplicates."""
        now = time.time() if now is None else now
        lines = [f"TileLang cache: {self.directory}", f"  {len(self.entries)} entries, {_size(self.total_bytes)}"]
        namespaces: dict[str, list[CacheEntry]] = {}
        for entry in self.entries:
            namespaces.setdefault(entry.namespace, []).append(entry)
        lines += [f"    {name}: {len(found)} entries, {_size(sum(e.bytes for e in found))}" for name, found in sorted(namespaces.items())]
        if self.entries:
            lines.append("  largest:")
            lines += [f"    {_size(e.bytes):>9}  {e.key[:16]}  used {_ago(now - e.used)} ago  {e.path}" for e in self.largest()]
        groups = self.duplicates()
        spare = [entry for group in groups for entry in group[1:]]
        lines.append(f"  duplicates (the same generated code under different keys): {len(groups)} group(s), "
                     f"{len(spare)} removable entr{'y' if len(spare) == 1 else 'ies'} ({_size(sum(e.bytes for e in spare))})")  # fmt: skip
        for group in groups:
            lines.append("    " + ", ".join(entry.key[:16] for entry in group) + f"  ({group[0].namespace})")
        return lines


def list_cache(directory: str | Path | None = None) -> CacheListing:
    """TileLang's cache ``directory`` (default: ``$TILELANG_CACHE_DIR``, else ``~/.tilelang/cache``), every version's entries."""
    root = Path(directory).expanduser() if directory is not None else tl.cache_directory()
    entries = []
    for kernels in sorted(root.glob(f"*/*/{tl.CACHE_KERNELS_DIR}")):
        for path in sorted(p for p in kernels.iterdir() if p.is_dir() and not p.name.startswith(".")):
            entries.append(_entry(path, kernels.parent.relative_to(root).as_posix()))
    return CacheListing(root, tuple(entries))


def _entry(path: Path, namespace: str) -> CacheEntry:
    files = [file for file in path.rglob("*") if file.is_file()]
    stats = [file.stat() for file in files]
    used = max((max(s.st_mtime, s.st_atime) for s in stats), default=path.stat().st_mtime)
    return CacheEntry(path.name, path, namespace, sum(s.st_size for s in stats), used, _fingerprint(path))


def _fingerprint(path: Path) -> str:
    """The hashes TileLang's manifest keeps of the entry's sources and parameters (hashed here when it has none)."""
    try:
        listed = json.loads((path / tl.CACHE_MANIFEST).read_text())["files"]
        hashes = [str(listed[name]["sha256"]) for name in _FINGERPRINTED]
    except (OSError, ValueError, KeyError, TypeError):
        present = [path / name for name in _FINGERPRINTED]
        if not all(file.is_file() for file in present):
            return ""
        hashes = [hashlib.sha256(file.read_bytes()).hexdigest() for file in present]
    return hashlib.sha256("|".join(hashes).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class PrunePlan:
    """The entries a prune would remove, each with why."""

    listing: CacheListing
    removals: tuple[tuple[CacheEntry, str], ...]

    @property
    def bytes(self) -> int:
        return sum(entry.bytes for entry, _ in self.removals)

    def lines(self, done: bool = False) -> list[str]:
        verb = "removed" if done else "would remove"
        lines = [f"{verb} {len(self.removals)} of {len(self.listing.entries)} entries ({_size(self.bytes)}) from {self.listing.directory}"]
        lines += [f"  {_size(entry.bytes):>9}  {entry.key[:16]}  {why}" for entry, why in self.removals]
        if not done:
            lines.append("dry run: nothing was deleted; add --yes to delete these entries")
        return lines


def plan_prune(
    listing: CacheListing,
    older_than_s: float | None = None,
    max_bytes: int | None = None,
    duplicates: bool = False,
    now: float | None = None,
) -> PrunePlan:
    """What to remove: duplicates (all but the most recently used of a group), entries unused for ``older_than_s``
    seconds, then the least recently used until the rest fits in ``max_bytes``."""
    now = time.time() if now is None else now
    chosen: dict[Path, str] = {}
    if duplicates:
        for group in listing.duplicates():
            for entry in group[1:]:
                chosen[entry.path] = f"duplicate of {group[0].key[:16]} (the same generated code)"
    if older_than_s is not None:
        for entry in listing.entries:
            if entry.path not in chosen and now - entry.used > older_than_s:
                chosen[entry.path] = f"unused for {_ago(now - entry.used)}"
    if max_bytes is not None:
        kept = sorted((e for e in listing.entries if e.path not in chosen), key=lambda e: e.used)
        total = sum(entry.bytes for entry in kept)
        for entry in kept:
            if total <= max_bytes:
                break
            chosen[entry.path] = f"least recently used (the cache is over {_size(max_bytes)})"
            total -= entry.bytes
    return PrunePlan(listing, tuple((entry, chosen[entry.path]) for entry in listing.entries if entry.path in chosen))


def remove(plan: PrunePlan) -> int:
    """Delete ``plan``'s entries (only folders of the listed cache's ``kernels/`` folders); how many were removed."""
    root = plan.listing.directory.resolve()
    removed = 0
    for entry, _ in plan.removals:
        path = entry.path.resolve()
        if path.parent.name != tl.CACHE_KERNELS_DIR or root not in path.parents:
            raise ValueError(f"{path} is not an entry of TileLang's cache {root}; nothing more was deleted")
        shutil.rmtree(path)
        removed += 1
    return removed


def parse_age(text: str) -> float:
    """``30d``, ``12h``, ``2w``, ``90m``, ``45s`` in seconds."""
    match = _AGE.match(text)
    if match is None:
        raise ValueError(f"{text!r}: expected an age like 30d, 12h, 2w or 90m")
    return float(match.group(1)) * _SECONDS[match.group(2).lower()]


def parse_size(text: str) -> int:
    """``5G``, ``500M``, ``1.5GB``, ``100K`` or a number of bytes."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"{text!r}: expected a size like 5G, 500M or 100K")
    return int(float(match.group(1)) * 1024 ** " KMGT".index(match.group(2).upper() or " "))


def _size(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GiB"


def _ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"
