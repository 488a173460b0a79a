"""What the history keys a row by (:class:`RunKey`, a call's signature), and when a stored row still answers for its config."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from tilelab.tune.result import TuneRow, TuneStatus

__all__ = ["RunKey", "StoredRow", "signature_numbers", "signature_of"]

_CONFIG_FAILURES = (TuneStatus.COMPILE_ERROR, TuneStatus.CANNOT_LAUNCH, TuneStatus.RUN_ERROR, TuneStatus.MISMATCH)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def signature_of(args: tuple, fixed: dict[str, Any]) -> str:
    """A canonical text of the arguments every config shares (tensors by shape and dtype)."""

    def plain(value: Any) -> Any:
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        if shape is not None and dtype is not None:
            return f"Tensor[{', '.join(str(int(s)) for s in shape)}; {dtype}]"
        if isinstance(value, (bool, int, float, str)) or value is None:
            return value
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return repr(value)

    return json.dumps({"args": [plain(a) for a in args], "kwargs": {k: plain(v) for k, v in sorted(fixed.items())}})


@dataclass(frozen=True)
class RunKey:
    """What makes two measurements of the same config comparable."""

    kernel_name: str
    kernel_hash: str
    signature: str
    target: str
    device: str

    @classmethod
    def of(cls, name: str, source: str, signature: str, target: str, device: str) -> RunKey:
        return cls(name, hashlib.sha256(source.encode()).hexdigest()[:16], signature, target, device)


@dataclass(frozen=True)
class StoredRow:
    """A row of the history and what it was measured under."""

    row: TuneRow
    tilelang_version: str
    timeout_s: float | None

    def stands(self, tilelang_version: str, timeout: float) -> bool:
        """Whether this row still answers for its config, so that a new run need not measure it.

        A success stands. A failure of the config (compile or run error, mismatch) stands
        while TileLang is the same version (a changed kernel has another key). A timeout
        stands only under the same TileLang and no longer a time limit. A failure of the
        run itself (a crashed worker, a config compiled but never benchmarked) never stands.
        """
        status = self.row.status
        if status is TuneStatus.OK:
            return True
        if status in _CONFIG_FAILURES:
            return self.tilelang_version == tilelang_version
        if status is TuneStatus.TIMEOUT:
            same = self.tilelang_version == tilelang_version
            return same and self.timeout_s is not None and timeout <= self.timeout_s
        return False


def signature_numbers(signature: str) -> tuple[str, list[float]]:
    """A signature's form (its text with every number replaced by ``#``) and its positive numbers, in order."""
    numbers = [float(text) for text in _NUMBER.findall(signature)]
    return _NUMBER.sub("#", signature), [abs(n) for n in numbers]
