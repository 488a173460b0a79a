"""The records of one compile: plain, immutable, JSON-serialisable data.

Records hold text, numbers and numpy arrays only (never TVM or torch objects),
import nothing heavy, and know nothing of views. ``KernelRecord.to_json`` /
``KernelRecord.from_json`` carry ``FORMAT_VERSION``.
"""

from tilelab.records import machine_code, parts, profile
from tilelab.records.kernel import FORMAT_VERSION, KernelRecord
from tilelab.records.machine_code import *  # noqa: F403  (the package offers each module's __all__)
from tilelab.records.parts import *  # noqa: F403
from tilelab.records.profile import *  # noqa: F403

__all__ = ["FORMAT_VERSION", "KernelRecord", *machine_code.__all__, *parts.__all__, *profile.__all__]
