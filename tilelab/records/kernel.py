"""The record of one compile (:class:`KernelRecord`) and its JSON format.

``KernelRecord.to_json`` / ``KernelRecord.from_json`` carry ``FORMAT_VERSION``;
every readable older format decodes into today's record.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field, fields, replace
from typing import Any

from tilelab.provenance import CacheSource, Provenance
from tilelab.records.encoding import decode_array, decode_peaks, encode, values_equal
from tilelab.records.machine_code import MachineCodeRecord
from tilelab.records.parts import (
    CompileMode,
    ErrorRecord,
    LaunchRecord,
    LayoutKind,
    LayoutRecord,
    LineLink,
    PassRecord,
    SourceMap,
    SourceRecord,
    StaticEstimate,
    Status,
    TimingRecord,
)
from tilelab.records.profile import ProfileRecord
from tilelab.repro import reproducer_of_record

# 2: a launch per device kernel, launch problems, layouts keyed per kernel; 3: static estimate;
# 4: the estimate's GEMM operand dtypes (which pick its FLOP peak); 5: provenance (who served it, the cache key's parts);
# 6: the source's map (device-code line -> kernel-file line, repaired at capture);
# 7: the estimate's and the roofline position's peaks as one DevicePeaks (they were four flat fields);
# 8: the profile's warp-state samples per SASS instruction; 9: why a lowered-only record was lowered (lowered_because)
FORMAT_VERSION = 9
# Formats 3 to 6, 8 and 9 only added optional fields: older files lack them (None, no dtypes, no samples, "");
# decode_peaks reads both peaks.
_READABLE_FORMATS = (2, 3, 4, 5, 6, 7, 8, 9)


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
    launches: tuple[LaunchRecord, ...] = ()  # one per device kernel
    launch_problems: tuple[str, ...] = ()  # why a kernel cannot launch on ``arch``, with the numbers
    machine_code: MachineCodeRecord | None = None  # PTX, SASS, resources, occupancy (CUDA, when nvcc is found)
    estimate: StaticEstimate | None = None  # static roofline estimate (CUDA, where tilelang's Analyzer reads the kernel)
    estimate_note: str = ""  # why there is no estimate, in one line
    latency_ms: float | None = None  # a measured latency of this kernel, when one was attached (with_latency)
    profile: ProfileRecord | None = None  # one ncu run of the compiled kernel (%%tilelang --profile), when attached
    timings: TimingRecord = field(default_factory=TimingRecord)
    error: ErrorRecord | None = None
    warnings: tuple[str, ...] = ()
    device_name: str | None = None
    lowered_because: str = ""  # why a lowered-only record was not compiled: NO_GPU, or the GPU was of another arch ("": not said, before format 9)
    from_cache: bool = False
    provenance: Provenance | None = None  # who served the compile and what TileLang's cache key was made of
    created: float = field(default_factory=time.time)  # when the compile finished (orders a kernel's runs)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def lowered_only(self) -> bool:
        return self.mode is CompileMode.LOWERED

    @property
    def launch(self) -> LaunchRecord | None:
        """The first device kernel's launch (most programs have one)."""
        return self.launches[0] if self.launches else None

    @property
    def launchable(self) -> bool:
        """False when a device kernel exceeds the arch's limits (threads, shared memory; registers with machine code)."""
        machine_ok = self.machine_code is None or self.machine_code.launchable
        return not self.launch_problems and machine_ok

    @property
    def has_cuda_source(self) -> bool:
        """Compiled, with CUDA device source: what nvcc can build machine code from."""
        return self.ok and self.source is not None and self.source.language == "cuda"

    def with_machine_code(self, machine_code: MachineCodeRecord) -> KernelRecord:
        """This record (same id) with its machine code attached."""
        return replace(self, machine_code=machine_code)

    def with_profile(self, profile: ProfileRecord) -> KernelRecord:
        """This record (same id) with an ncu profile attached."""
        return replace(self, profile=profile)

    def with_latency(self, latency_ms: float | None) -> KernelRecord:
        """This record (same id) with a measured latency in ms (e.g. a tuning row's), for the percent of roofline."""
        return replace(self, latency_ms=latency_ms)

    @property
    def percent_of_roofline(self) -> float | None:
        """The static roofline time as a percent of the measured latency; None without both."""
        return self.estimate.percent_of_roofline(self.latency_ms) if self.estimate else None

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
            "kernels": len(self.launches),
            "launchable": self.launchable,
            "error": self.error.message if self.error else None,
            "from_cache": self.from_cache,
        }

    def with_cache_hit(self) -> KernelRecord:
        """This record shown again from TileLab's cell cache (nothing compiled)."""
        provenance = self.provenance.served_from(CacheSource.CELL) if self.provenance is not None else None
        return replace(self, from_cache=True, provenance=provenance)

    def reproducer(self) -> str:
        """A standalone Python file (it imports only ``tilelang`` and ``torch``) that compiles this kernel again.

        It holds the kernel's source, the arguments, target and pass configs, seeded
        inputs and a NaN/Inf check of the outputs, under a header saying what TileLab
        observed (the compile error, the latency, the device). See :mod:`tilelab.repro`.
        """
        return reproducer_of_record(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KernelRecord):
            return NotImplemented
        return all(values_equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        state = self.status.value if not self.ok else self.mode.value
        return f"<KernelRecord {self.name} {self.arch} {state}, {len(self.passes)} passes>"

    # -- JSON ---------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps({"format": FORMAT_VERSION, "record": encode(self)})

    def save(self, path: Any) -> None:
        """Write this record as JSON to ``path`` (a str or ``Path``); ``tilelab.load(path)`` reads it back."""
        with open(path, "w", encoding="utf-8") as file:
            file.write(self.to_json())

    @classmethod
    def from_json(cls, text: str) -> KernelRecord:
        payload = json.loads(text)
        version = payload.get("format")
        if version == 1:
            return _decode_kernel(_upgraded_from_v1(payload["record"]))
        if version not in _READABLE_FORMATS:
            raise ValueError(f"KernelRecord JSON format {version!r} is not supported (expected {FORMAT_VERSION})")
        return _decode_kernel(payload["record"])


def _decode_layout(data: dict) -> LayoutRecord:
    return LayoutRecord(
        **{
            **data,
            "shape": tuple(data["shape"]),
            "kind": LayoutKind(data["kind"]),
            "thread": decode_array(data["thread"]),
            "local_index": decode_array(data["local_index"]),
            "offset": decode_array(data["offset"]),
        }
    )


def _decode_source(data: dict | None) -> SourceRecord | None:
    if data is None:
        return None
    links = tuple(LineLink(**link) for link in data["line_links"])
    source_map = None if data.get("source_map") is None else SourceMap.from_dict(data["source_map"])
    return SourceRecord(**{**data, "line_links": links, "source_map": source_map})


def _upgraded_from_v1(data: dict) -> dict:
    """Format 1 had one ``launch`` (or None) and no launch problems."""
    data = dict(data)
    launch = data.pop("launch")
    data["launches"] = [] if launch is None else [launch]
    data["launch_problems"] = []
    data["machine_code"] = None
    data["created"] = 0.0
    return data


def _estimate_from(data: dict) -> StaticEstimate:
    return StaticEstimate(**{**decode_peaks(data), "operand_dtypes": tuple(data.get("operand_dtypes", ()))})


def _decode_kernel(data: dict) -> KernelRecord:
    return KernelRecord(
        **{
            **data,
            "status": Status(data["status"]),
            "mode": CompileMode(data["mode"]),
            "passes": tuple(PassRecord(**p) for p in data["passes"]),
            "source": _decode_source(data["source"]),
            "layouts": {name: _decode_layout(layout) for name, layout in data["layouts"].items()},
            "launches": tuple(
                LaunchRecord(**{**launch, "grid": tuple(launch["grid"]), "block": tuple(launch["block"])})
                for launch in data["launches"]
            ),
            "launch_problems": tuple(data["launch_problems"]),
            "timings": TimingRecord(**data["timings"]),
            "error": None if data["error"] is None else ErrorRecord(**data["error"]),
            "warnings": tuple(data["warnings"]),
            "machine_code": None if data.get("machine_code") is None else MachineCodeRecord.from_dict(data["machine_code"]),
            "estimate": None if data.get("estimate") is None else _estimate_from(data["estimate"]),
            "profile": None if data.get("profile") is None else ProfileRecord.from_dict(data["profile"]),
            "provenance": None if data.get("provenance") is None else Provenance.from_dict(data["provenance"]),
        }
    )
