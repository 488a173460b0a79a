"""What changed between two records: as data, as the text ``tilelab diff`` prints, and as one line.

Passes are aligned by name (as ``tilelab.compare`` aligns them); registers and
spills come from the records' machine code when both carry it. ``%%tilelang``
shows :meth:`RecordChanges.headline` under the Explorer ("since the last run").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilelab.diffs import align_passes, count_changes, ir_at, only_in, pass_name
from tilelab.machine.occupancy import byte_size
from tilelab.records import KernelRecord

__all__ = ["ASPECTS", "RecordChanges", "record_changes"]

ASPECTS = ("registers", "spills", "shared", "passes", "launch")


@dataclass(frozen=True)
class RecordChanges:
    """The differences from record ``a`` to record ``b``; each tuple of text lists one aspect's changes."""

    label: str
    passes_added: tuple[str, ...]
    passes_removed: tuple[str, ...]
    passes_changed: tuple[str, ...]  # aligned passes whose IR differs
    cuda_added: int
    cuda_removed: int
    launch: tuple[str, ...]
    shared: tuple[str, ...]
    registers: tuple[str, ...] | None  # None: not both records carry machine code
    spills: tuple[str, ...] | None
    layouts: tuple[str, ...] = ()  # buffers whose layout was added, removed or changed
    code_name: str = "CUDA"  # what the device code is ("C" for a CPU kernel), as the counts name it

    @property
    def identical(self) -> bool:
        """Nothing the compiler produced differs."""
        return not (self.changed("passes") or self.cuda_added or self.cuda_removed or self.launch or self.shared
                    or self.registers or self.spills or self.layouts)  # fmt: skip

    def headline(self) -> str:
        """One line: what changed, aspect by aspect (unchanged aspects left out)."""
        if self.identical:
            return f"no change in passes, {self.code_name}, launch, layouts or resources"
        parts = []
        if self.changed("passes"):
            parts.append(
                f"passes +{len(self.passes_added)} -{len(self.passes_removed)} ~{len(self.passes_changed)}"
            )
        if self.cuda_added or self.cuda_removed:
            parts.append(f"{self.code_name} +{self.cuda_added}/-{self.cuda_removed} lines")
        for title, changes in (("launch", self.launch), ("shared", self.shared), ("registers", self.registers),
                               ("spills", self.spills), ("layouts", self.layouts)):  # fmt: skip
            if changes:
                parts.append(f"{title} {'; '.join(changes)}")
        return " · ".join(parts)

    def changed(self, aspect: str) -> bool:
        """Whether ``aspect`` (one of :data:`ASPECTS`) differs."""
        if aspect == "passes":
            return bool(self.passes_added or self.passes_removed or self.passes_changed)
        return bool(getattr(self, aspect))

    def lines(self) -> list[str]:
        """The text summary, one line per aspect."""
        changed = ", ".join(self.passes_changed[:5]) + (", ..." if len(self.passes_changed) > 5 else "")
        return [
            self.label,
            f"passes: {len(self.passes_added)} added, {len(self.passes_removed)} removed, "
            f"{len(self.passes_changed)} changed" + (f" ({changed})" if changed else ""),
            *(f"  + {name}" for name in self.passes_added),
            *(f"  - {name}" for name in self.passes_removed),
            f"{self.code_name} lines: +{self.cuda_added} -{self.cuda_removed}",
            _aspect_line("launch", self.launch),
            _aspect_line("shared memory", self.shared),
            _aspect_line("registers", self.registers),
            _aspect_line("spills", self.spills),
            _aspect_line("layouts", self.layouts),
        ]


def _aspect_line(title: str, changes: tuple[str, ...] | None) -> str:
    if changes is None:
        return f"{title}: not recorded in both (no machine code)"
    return f"{title}: {'; '.join(changes) if changes else 'unchanged'}"


def record_changes(a: KernelRecord, b: KernelRecord) -> RecordChanges:
    """Compare ``a`` (before) with ``b`` (after)."""
    first, second = only_in(a, b)
    changed = tuple(
        dict.fromkeys(
            pass_name(a.passes[left].name, b.passes[right].name)
            for left, right in align_passes(a, b)
            if left is not None and right is not None and ir_at(a.passes, left) != ir_at(b.passes, right)
        )
    )
    added, removed = count_changes(a.source.device if a.source else "", b.source.device if b.source else "")
    return RecordChanges(
        label=f"{a.name} ({a.arch}, {_state(a)}) -> {b.name} ({b.arch}, {_state(b)})",
        passes_added=tuple(second),
        passes_removed=tuple(first),
        passes_changed=changed,
        cuda_added=added,
        cuda_removed=removed,
        launch=_launch_changes(a, b),
        shared=_per_kernel(a, b, lambda launch: f"{byte_size(launch.dynamic_shared_bytes)} dynamic", _launches)
        + (_machine_changes(a, b, lambda r: f"{byte_size(r.shared_bytes)} static") or ()),
        registers=_machine_changes(a, b, lambda r: r.registers),
        spills=_machine_changes(a, b, lambda r: f"{r.spills} B"),
        layouts=_layout_changes(a, b),
        code_name=source.code_name if (source := b.source or a.source) else "CUDA",
    )


def _layout_changes(a: KernelRecord, b: KernelRecord) -> tuple[str, ...]:
    changes = []
    for name in dict.fromkeys([*a.layouts, *b.layouts]):
        if name not in a.layouts:
            changes.append(f"+{name}")
        elif name not in b.layouts:
            changes.append(f"-{name}")
        elif a.layouts[name] != b.layouts[name]:
            changes.append(f"{name} changed")
    return tuple(changes)


def _state(record: KernelRecord) -> str:
    return record.mode.value if record.ok else "failed"


def _launches(record: KernelRecord) -> dict[str, Any]:
    return {launch.kernel or f"kernel {i}": launch for i, launch in enumerate(record.launches)}


def _launch_changes(a: KernelRecord, b: KernelRecord) -> tuple[str, ...]:
    def shape(launch: Any) -> str:
        return f"grid {tuple(launch.grid)} block {tuple(launch.block)}"

    return _per_kernel(a, b, shape, _launches)


def _per_kernel(a: KernelRecord, b: KernelRecord, value: Any, items: Any) -> tuple[str, ...]:
    """``kernel: before -> after`` for each device kernel whose ``value`` differs (or that only one has)."""
    before, after = items(a), items(b)
    changes = []
    for kernel in dict.fromkeys([*before, *after]):
        old = value(before[kernel]) if kernel in before else "absent"
        new = value(after[kernel]) if kernel in after else "absent"
        if old != new:
            changes.append(f"{kernel}: {old} -> {new}")
    return tuple(changes)


def _machine_changes(a: KernelRecord, b: KernelRecord, value: Any) -> tuple[str, ...] | None:
    code_a, code_b = getattr(a, "machine_code", None), getattr(b, "machine_code", None)
    if code_a is None or code_b is None or not code_a.resources or not code_b.resources:
        return None
    return _per_kernel(a, b, value, lambda record: record.machine_code.resources)
