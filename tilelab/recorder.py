"""The silent pass instrument behind every capture: IR text, timings and layouts per pass.

Registered through ``tilelang.instrumentation`` for one compile and removed in
``finally`` (never a monkey-patch). After each top-level pass the IR is
snapshot at pass time: a structural hash first, and the printed text only when
the hash changed (printing every pass costs ~1.5x a plain lowering; unchanged
passes share the previous text). Modules can change in place after a pass, so
nothing is printed later from a kept reference. A pass TVM knows only as
``pass_fn`` (a Python function pass made without a name, as TileLang's
semantic checks are) is named by the line that ran it.
"""

from __future__ import annotations

import inspect
import linecache
import re
import threading
import time
import uuid
from contextlib import contextmanager
from typing import Any

from tilelab.diffs import UNNAMED_PASS, pass_change
from tilelab.layouts import layouts_of_module
from tilelab.records import LayoutRecord, PassRecord

__all__ = ["PassRecorder"]

_LAYOUT_PASS = "tl.LayoutInference"
_PASS_CALL = re.compile(r"([A-Za-z_][\w.]*)\(\)\(")  # tilelang.analysis.NestedLoopChecker()(mod)
_PLUMBING = ("tilelab", "tvm", "tvm_ffi", "tilelang.instrumentation")  # modules between a pass's call and this recorder


class PassRecorder:
    """Observer of top-level passes: IR text at pass time, timings, layouts."""

    def __init__(self) -> None:
        self.passes: list[PassRecord] = []
        self.layouts: dict[str, LayoutRecord] = {}
        self.warnings: list[str] = []
        self.lower_s = 0.0
        self._last_hash: int | None = None
        self._input_hash: int | None = None  # the module the first pass was given
        self._last_ir = ""
        self._first_start: float | None = None
        self._thread = threading.get_ident()

    def stage(self, elaborated: bool) -> str:
        """Which stage a failure happened in, from how far the passes got."""
        if not elaborated:
            return "elaborate"
        return "lower" if not self.passes or self.passes[-1].name != "tl.LowerIntrin" else "compile"

    # -- PassEventObserver --------------------------------------------------
    def enter_pass_context(self) -> None: ...

    def exit_pass_context(self) -> None: ...

    def callback_mismatch(self, actual: str, expected: str | None) -> None: ...

    def passes_incomplete(self, passes, error) -> None: ...

    def pass_started(self, mod: Any, event: Any) -> tuple[float, str]:
        now = time.perf_counter()
        if self._first_start is None:
            self._first_start = now
            self._input_hash = _structural_hash(mod)  # so that a first pass that changes nothing says so
        return now, (_named_by_its_call() or event.name) if event.name == UNNAMED_PASS else event.name

    def pass_finished(self, mod: Any, event: Any, state: tuple[float, str]) -> None:
        started, name = state
        seconds = time.perf_counter() - started
        digest = _structural_hash(mod)
        ir = self._last_ir if digest == self._last_hash else str(mod.script())
        if self.passes or digest != self._input_hash:
            changed, added, removed = pass_change(self._last_ir if self.passes else None, ir)
        else:
            changed, added, removed = False, 0, 0
        self.passes.append(
            PassRecord(
                index=len(self.passes),
                name=name,
                ir=ir,
                changed=changed,
                added=added,
                removed=removed,
                seconds=seconds,
                phase=event.phase,
            )
        )
        self._last_hash, self._last_ir = digest, ir
        self.lower_s = time.perf_counter() - (self._first_start or started)
        if event.name == _LAYOUT_PASS:
            self._snapshot_layouts(mod)

    def _snapshot_layouts(self, mod: Any) -> None:
        # A layout we cannot tabulate must not fail the compile it observes.
        try:
            self.layouts.update(layouts_of_module(mod, self.warnings))
        except Exception as exc:
            self.warnings.append(f"layouts not tabulated: {type(exc).__name__}: {exc}")

    # -- registration ---------------------------------------------------------
    def installed(self):
        """A context in which this thread's compiles report their passes to this recorder."""
        from tilelang.instrumentation import (
            PassInstrumentationTool,
            StackedPassInstrument,
            register_pass_instrumentation_tool,
            unregister_pass_instrumentation_tool,
        )

        recorder = self

        class _RecorderTool(PassInstrumentationTool):
            def create_pass_instrument(self):
                return StackedPassInstrument(recorder, capture_nested=False)

        def factory() -> PassInstrumentationTool:
            # Compiles on other threads get a silent tool, not this recorder.
            return _RecorderTool() if threading.get_ident() == recorder._thread else PassInstrumentationTool()

        @contextmanager
        def scope():
            tool_name = f"tilelab-{uuid.uuid4().hex}"
            register_pass_instrumentation_tool(tool_name, factory)
            try:
                yield
            finally:
                unregister_pass_instrumentation_tool(tool_name)

        return scope()


def _structural_hash(mod: Any) -> int:
    import tvm  # only once TileLang is imported: it bundles its own

    return tvm.ir.structural_hash(mod)


def _named_by_its_call() -> str | None:
    """The pass a line like ``tilelang.analysis.NestedLoopChecker()(mod)`` runs, read from the first Python frame
    above this recorder, TVM and TileLang's instrumentation; None where that line calls no pass that way."""
    frame = inspect.currentframe()
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if not any(module == prefix or module.startswith(f"{prefix}.") for prefix in _PLUMBING):
            match = _PASS_CALL.search(linecache.getline(frame.f_code.co_filename, frame.f_lineno))
            return match.group(1) if match else None
        frame = frame.f_back
    return None
