"""The records of one compile: plain, immutable, JSON-serialisable data.

Records hold text, numbers and numpy arrays only (never TVM or torch objects),
import nothing heavy, and know nothing of views. ``KernelRecord.to_json`` /
``KernelRecord.from_json`` carry ``FORMAT_VERSION``.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Any

import numpy as np

__all__ = [
    "FORMAT_VERSION",
    "CompileMode",
    "ErrorRecord",
    "KernelRecord",
    "LaunchRecord",
    "LayoutKind",
    "LayoutRecord",
    "LineLink",
    "PassRecord",
    "SourceRecord",
    "Status",
    "TimingRecord",
]

FORMAT_VERSION = 1


class Status(str, Enum):
    """Whether the compile finished."""

    OK = "ok"
    FAILED = "failed"


class CompileMode(str, Enum):
    """How far the compile went."""

    LOWERED = "lowered"  # device code generated, not compiled: no GPU here
    COMPILED = "compiled"  # compiled for a present device (or the CPU), runnable


class LayoutKind(str, Enum):
    FRAGMENT = "fragment"  # registers: element -> (thread, local index)
    SHARED = "shared"  # shared memory: element -> physical offset
    OTHER = "other"


@dataclass(frozen=True)
class PassRecord:
    """One top-level compiler pass and the IR right after it."""

    index: int
    name: str
    ir: str
    changed: bool
    added: int
    removed: int
    seconds: float
    phase: str | None = None


@dataclass(frozen=True)
class LineLink:
    """Generated-source line ``output_line`` came from ``file:line``."""

    output_line: int
    file: str
    line: int


@dataclass(frozen=True)
class SourceRecord:
    """Generated sources and how they link back to the kernel's Python."""

    device: str
    host: str | None
    language: str  # "cuda" or "c"
    line_links: tuple[LineLink, ...]
    kernel_file: str  # the file (or cell) that defined the kernel
    kernel_source: str  # the text of kernel_file, for side-by-side views

    def cuda_lines_for(self, line: int) -> list[int]:
        """Generated lines that came from ``line`` of the kernel's file."""
        return [link.output_line for link in self.line_links if link.file == self.kernel_file and link.line == line]

    def kernel_line_for(self, output_line: int) -> int | None:
        """The kernel-file line that generated ``output_line``, if known."""
        for link in self.line_links:
            if link.output_line == output_line and link.file == self.kernel_file:
                return link.line
        return None


@dataclass(frozen=True, eq=False)
class LayoutRecord:
    """The inferred layout of one buffer after ``tl.LayoutInference``.

    For fragments ``thread`` and ``local_index`` have shape
    ``(replicas, *shape)``: replica ``r`` of element ``(i, j)`` lives in
    register ``local_index[r, i, j]`` of thread ``thread[r, i, j]``.
    For shared buffers ``offset`` has shape ``shape`` and holds the physical
    element offset (row-major over the layout's output shape).
    """

    buffer: str
    scope: str
    shape: tuple[int, ...]
    dtype: str
    kind: LayoutKind
    description: str
    threads: int = 0
    replicas: int = 1
    thread: np.ndarray | None = None
    local_index: np.ndarray | None = None
    offset: np.ndarray | None = None

    @property
    def element_bytes(self) -> int:
        bits = int("".join(ch for ch in self.dtype if ch.isdigit()) or 8)
        return max(1, bits // 8)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LayoutRecord):
            return NotImplemented
        return all(_values_equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    __hash__ = None  # type: ignore[assignment]

    def plot(self, **kwargs: Any):
        """An interactive plotly figure of this layout (see ``tilelab.views.layout``)."""
        from tilelab.views.layout import layout_figure

        return layout_figure(self, **kwargs)

    def to_matplotlib(self, **kwargs: Any):
        """A static matplotlib figure of this layout, for papers."""
        from tilelab.views.layout import layout_matplotlib

        return layout_matplotlib(self, **kwargs)


@dataclass(frozen=True)
class LaunchRecord:
    """Launch facts; an extent that depends on a dynamic shape is its expression (a str)."""

    grid: tuple[int | str, int | str, int | str]
    block: tuple[int, int, int]
    dynamic_shared_bytes: int

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


@dataclass(frozen=True)
class TimingRecord:
    elaborate_s: float = 0.0
    lower_s: float = 0.0
    compile_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.elaborate_s + self.lower_s + self.compile_s


@dataclass(frozen=True)
class ErrorRecord:
    """A failure a user caused, cleaned for display; ``log`` keeps the original."""

    kind: str  # e.g. "elaborate", "lower", "compile", "run"
    message: str
    file: str | None = None
    line: int | None = None  # line in ``file`` (a cell line for %%tilelang)
    log: str = ""


@dataclass(frozen=True, eq=False)
class KernelRecord:
    """Everything one compile of one kernel produced.

    ``mode`` says whether the device code was compiled (runnable) or only
    lowered; ``status`` whether the compile finished. A failed compile is a
    record too: ``error`` says why and ``passes`` holds those that ran.
    """

    name: str
    status: Status
    mode: CompileMode
    target: str  # the TVM target as JSON
    arch: str
    tilelang_version: str
    cache_key: str
    arguments: dict[str, str] = field(default_factory=dict)  # reprs of the values explored with
    passes: tuple[PassRecord, ...] = ()
    source: SourceRecord | None = None
    layouts: dict[str, LayoutRecord] = field(default_factory=dict)
    launch: LaunchRecord | None = None
    timings: TimingRecord = field(default_factory=TimingRecord)
    error: ErrorRecord | None = None
    warnings: tuple[str, ...] = ()
    device_name: str | None = None
    from_cache: bool = False
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def lowered_only(self) -> bool:
        return self.mode is CompileMode.LOWERED

    def pass_named(self, name: str) -> PassRecord:
        """The first pass called ``name``."""
        for record in self.passes:
            if record.name == name:
                return record
        raise KeyError(f"no pass named {name!r} in {self.name}; passes: {', '.join(p.name for p in self.passes)}")

    def summary(self) -> dict[str, Any]:
        """A small JSON-ready dict for lists (the panel, ``%tilelang list``)."""
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status.value,
            "mode": self.mode.value,
            "arch": self.arch,
            "passes": len(self.passes),
            "changed_passes": sum(1 for p in self.passes if p.changed),
            "compile_s": round(self.timings.total_s, 3),
            "threads": self.launch.threads if self.launch else None,
            "grid": list(self.launch.grid) if self.launch else None,
            "error": self.error.message if self.error else None,
            "from_cache": self.from_cache,
        }

    def with_cache_hit(self) -> KernelRecord:
        return replace(self, from_cache=True)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KernelRecord):
            return NotImplemented
        return all(_values_equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        state = self.status.value if not self.ok else self.mode.value
        return f"<KernelRecord {self.name} {self.arch} {state}, {len(self.passes)} passes>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        from tilelab.views import record_view

        return record_view(self)._repr_mimebundle_(include=include, exclude=exclude)

    # -- JSON ---------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps({"format": FORMAT_VERSION, "record": _encode(self)})

    @classmethod
    def from_json(cls, text: str) -> KernelRecord:
        payload = json.loads(text)
        version = payload.get("format")
        if version != FORMAT_VERSION:
            raise ValueError(f"KernelRecord JSON format {version!r} is not supported (expected {FORMAT_VERSION})")
        return _decode_kernel(payload["record"])


def _values_equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and bool((a == b).all())
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_values_equal(a[k], b[k]) for k in a)
    return a == b


def _encode(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _encode(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    return value


def _array(value: Any) -> np.ndarray | None:
    if value is None:
        return None
    return np.asarray(value["__ndarray__"], dtype=value["dtype"]).reshape(value["shape"])


def _decode_layout(data: dict) -> LayoutRecord:
    return LayoutRecord(
        **{
            **data,
            "shape": tuple(data["shape"]),
            "kind": LayoutKind(data["kind"]),
            "thread": _array(data["thread"]),
            "local_index": _array(data["local_index"]),
            "offset": _array(data["offset"]),
        }
    )


def _decode_source(data: dict | None) -> SourceRecord | None:
    if data is None:
        return None
    links = tuple(LineLink(**link) for link in data["line_links"])
    return SourceRecord(**{**data, "line_links": links})


def _decode_kernel(data: dict) -> KernelRecord:
    launch = data["launch"]
    return KernelRecord(
        **{
            **data,
            "status": Status(data["status"]),
            "mode": CompileMode(data["mode"]),
            "passes": tuple(PassRecord(**p) for p in data["passes"]),
            "source": _decode_source(data["source"]),
            "layouts": {name: _decode_layout(layout) for name, layout in data["layouts"].items()},
            "launch": None
            if launch is None
            else LaunchRecord(tuple(launch["grid"]), tuple(launch["block"]), launch["dynamic_shared_bytes"]),
            "timings": TimingRecord(**data["timings"]),
            "error": None if data["error"] is None else ErrorRecord(**data["error"]),
            "warnings": tuple(data["warnings"]),
        }
    )
