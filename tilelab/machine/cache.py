"""A content-addressed disk cache of built machine code: what nvcc, ptxas and nvdisasm said about one device source.

An entry is keyed by everything that decides the tools' output (device source,
compile arch, flags, tool versions, the cubin when one is given, this module's
format) and holds only launch-independent facts: the launch's shared memory and
threads, and so resources and occupancy, are applied after a hit. Entries are
gzipped JSON files, written atomically; an unreadable entry is a miss (and is
removed), never an error. The directory is ``$TILELAB_CACHE_DIR/machine``
(default ``~/.cache/tilelab/machine``, under ``$XDG_CACHE_HOME`` when set) and is
trimmed to :data:`MAX_BYTES`, least recently used first.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any

__all__ = ["FORMAT", "MAX_BYTES", "cache_dir", "cache_key", "load", "store"]

FORMAT = 2  # bump when what an entry holds, or how the tools' output is parsed, changes
MAX_BYTES = 256 * 1024 * 1024
_SUFFIX = ".json.gz"


def cache_dir() -> Path | None:
    """Where entries live; None when ``$TILELAB_CACHE_DIR`` is ``off`` (no cache)."""
    root = os.environ.get("TILELAB_CACHE_DIR")
    if root and root.lower() in ("off", "0", "none"):
        return None
    if not root:
        root = str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tilelab")
    return Path(root).expanduser() / "machine"


def cache_key(**parts: Any) -> str:
    """The sha256 of ``parts`` (strings, bytes, numbers, sequences) and :data:`FORMAT`."""
    digest = hashlib.sha256(f"tilelab-machine/{FORMAT}".encode())
    for name in sorted(parts):
        value = parts[name]
        data = value if isinstance(value, bytes) else json.dumps(value, sort_keys=True, default=str).encode()
        digest.update(f"\0{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _path(key: str, directory: Path | None) -> Path | None:
    return None if directory is None else directory / key[:2] / f"{key}{_SUFFIX}"


def load(key: str, directory: Path | None) -> dict[str, Any] | None:
    """The entry stored under ``key`` in ``directory`` (:func:`cache_dir`), or None (absent, unreadable or of another format)."""
    path = _path(key, directory)
    if path is None or not path.exists():
        return None
    try:
        entry = json.loads(gzip.decompress(path.read_bytes()))
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key:
            raise ValueError("not an entry of this format")
        os.utime(path)  # recently used: trimmed last
        return entry["value"]
    except (OSError, ValueError, EOFError, KeyError, TypeError, zlib.error):  # a corrupt entry is a miss
        path.unlink(missing_ok=True)
        return None


def store(key: str, value: dict[str, Any], directory: Path | None) -> None:
    """Write ``value`` (JSON-serialisable) under ``key`` in ``directory``; a failure to write only loses the cache."""
    path = _path(key, directory)
    if path is None:
        return
    data = gzip.compress(json.dumps({"format": FORMAT, "key": key, "value": value}).encode(), compresslevel=3)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as handle:
            handle.write(data)
        Path(handle.name).replace(path)
        _trim(path.parent.parent)
    except OSError:  # a read-only or full disk: the build still succeeded
        return


def _trim(directory: Path) -> None:
    """Remove the least recently used entries until the directory holds at most :data:`MAX_BYTES`."""
    entries = []
    for path in directory.glob(f"*/*{_SUFFIX}"):
        try:
            stat = path.stat()
        except OSError:
            continue
        entries.append((stat.st_mtime, stat.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= MAX_BYTES:
            break
        path.unlink(missing_ok=True)
        total -= size
