"""The records of one compile: plain, immutable, JSON-serialisable data.

Records hold text, numbers and numpy arrays only (never TVM or torch objects),
import nothing heavy, and know nothing of views. ``KernelRecord.to_json`` /
``KernelRecord.from_json`` carry ``FORMAT_VERSION``.
"""

from tilelab.records.kernel import FORMAT_VERSION, KernelRecord
from tilelab.records.machine_code import CodeLineLink, KernelResources, MachineCodeRecord, OccupancyRecord
from tilelab.records.parts import (
    CellLink,
    CompileMode,
    ErrorRecord,
    FoundThrough,
    LaunchRecord,
    LayoutKind,
    LayoutRecord,
    LineLink,
    PassRecord,
    SourceMap,
    SourceRecord,
    StaticEstimate,
    Status,
    TileOp,
    TimingRecord,
)
from tilelab.records.profile import KernelProfile, ProfileAdvice, ProfileRecord, RooflinePosition

__all__ = [
    "FORMAT_VERSION",
    "CellLink",
    "CodeLineLink",
    "CompileMode",
    "ErrorRecord",
    "FoundThrough",
    "KernelProfile",
    "KernelRecord",
    "KernelResources",
    "LaunchRecord",
    "LayoutKind",
    "LayoutRecord",
    "LineLink",
    "MachineCodeRecord",
    "OccupancyRecord",
    "PassRecord",
    "ProfileAdvice",
    "ProfileRecord",
    "RooflinePosition",
    "SourceMap",
    "SourceRecord",
    "StaticEstimate",
    "Status",
    "TileOp",
    "TimingRecord",
]
