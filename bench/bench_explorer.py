"""How big and how fast is the Explorer of a real record (CPU, no GPU needed).

Lowers the 1024^3 fp16 GEMM (128x128x32 tiles, 3 stages) for sm_90, then
prints: the Explorer's build time (object + widget + static snapshot, i.e.
what the first ``_repr_mimebundle_`` costs), cold (first in this process,
imports included) and warm (median of later builds); the initial widget
state and snapshot sizes; and what opening the Layouts tab adds.

Run: ``python bench/bench_explorer.py [--arch sm_90]``. Targets: build <= 1 s,
initial state + snapshot <= 2 MB.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))


def _build(record):
    from tilelab.views import record_view

    started = time.perf_counter()
    view = record_view(record)
    bundle = view._repr_mimebundle_()
    return view, bundle, time.perf_counter() - started


def state_bytes(widget) -> int:
    """JSON size of the synced state of ``widget`` and of every widget it references (what the browser gets first)."""
    from ipywidgets import Widget

    total, seen, stack = 0, set(), [widget]
    while stack:
        current = stack.pop()
        if current.model_id in seen:
            continue
        seen.add(current.model_id)
        total += _json_bytes(current.get_state())
        for name in current.keys:
            value = getattr(current, name)
            stack += [child for child in (value if isinstance(value, (list, tuple)) else [value]) if isinstance(child, Widget)]
    return total


def _json_bytes(state) -> int:
    """Bytes of ``state`` as the comm sends it: JSON, binary values beside it as buffers."""
    import json

    if isinstance(state, (bytes, bytearray, memoryview)):
        return len(bytes(state))
    if isinstance(state, dict):
        return 2 + sum(len(json.dumps(str(k))) + 2 + _json_bytes(v) for k, v in state.items())
    if isinstance(state, (list, tuple)):
        return 2 + sum(_json_bytes(v) + 1 for v in state)
    return len(json.dumps(state, default=str))


def _timed(function) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()

    from kernels import matmul

    import tilelab

    started = time.perf_counter()
    record = tilelab.explore(matmul, arch=options.arch)
    capture_s = time.perf_counter() - started

    view, bundle, cold_s = _build(record)
    warm_s = statistics.median(_build(record)[2] for _ in range(options.repeat))
    from tilelab.views.explorer import ExplorerView

    snapshot_s = statistics.median(_timed(ExplorerView(record).to_html) for _ in range(options.repeat))
    state = state_bytes(view.widget)
    snapshot = len(bundle["text/html"].encode())
    started = time.perf_counter()
    view.select("Layouts")
    layouts_s = time.perf_counter() - started
    with_layouts = state_bytes(view.widget)

    ir_chars = sum(len(p.ir) for p in record.passes)
    print(f"record: {record!r}, {sum(p.changed for p in record.passes)} changed, IR text {ir_chars / 1e3:.0f} k chars")
    print(f"capture (tilelab.explore):        {capture_s:.2f} s")
    print(f"explorer build, cold:             {cold_s:.3f} s  (first in process, imports included)")
    print(f"explorer build, warm (median {options.repeat}):  {warm_s:.3f} s")
    print(f"  of which static snapshot:       {snapshot_s:.3f} s")
    print(f"initial widget state:             {state / 1e3:.1f} kB")
    print(f"static snapshot (text/html):      {snapshot / 1e3:.1f} kB")
    print(f"state + snapshot:                 {(state + snapshot) / 1e6:.3f} MB  (limit 2 MB)")
    print(f"open Layouts tab:                 {layouts_s:.3f} s, state then {with_layouts / 1e3:.1f} kB")


if __name__ == "__main__":
    main()
