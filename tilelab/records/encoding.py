"""How records become JSON and back: numpy arrays, enums and dataclasses as plain values.

The record modules share these helpers; each record type decodes its own fields.
"""

from __future__ import annotations

from dataclasses import fields
from enum import Enum
from typing import Any

import numpy as np

from tilelab.peaks import DevicePeaks


def values_equal(a: Any, b: Any) -> bool:
    """Field equality where numpy arrays compare by shape and contents."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and bool((a == b).all())
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    return a == b


def encode(value: Any) -> Any:
    """``value`` as JSON-ready data: arrays carry their dtype and shape, enums their value."""
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: encode(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    return value


def decode_array(value: Any) -> np.ndarray | None:
    """The array that :func:`encode` wrote (None stays None)."""
    if value is None:
        return None
    return np.asarray(value["__ndarray__"], dtype=value["dtype"]).reshape(value["shape"])


def decode_peaks(data: dict) -> dict:
    """An encoded record that holds a device's peaks, with them decoded (before format 7, four flat fields)."""
    data = dict(data)
    if "peaks" in data:
        data["peaks"] = DevicePeaks(**data["peaks"])
    else:
        flat = ("device", "peak_flops", "peak_bytes", "peaks_source")
        data["peaks"] = DevicePeaks(*(data.pop(name) for name in flat))
    return data
