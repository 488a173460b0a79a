"""The Explorer: what ``%%tilelang`` shows for one record — tabs Overview · Passes · Source · Layouts · Machine code,
and Profile when the record carries an ncu profile (``%%tilelang --profile``).

The live widget is one :class:`~tilelab.views.widgets.ExplorerWidget` (tab bar and every tab,
CodeMirror panes and the layout grid; each tab's data fetched on request). The static snapshot has
the same sections as ``<details>``.
"""

from __future__ import annotations

from typing import Any

from tilelab.records import KernelRecord
from tilelab.registry import default_registry
from tilelab.views._bundle import BundleView
from tilelab.views.html import BOX, details, escape
from tilelab.views.layouts.data import layouts_data, tile_reply
from tilelab.views.layouts.snapshot import layouts_snapshot
from tilelab.views.machine.data import MachineData, machine_data, machine_texts
from tilelab.views.machine.snapshot import machine_snapshot
from tilelab.views.overview.data import overview_data
from tilelab.views.overview.snapshot import overview_snapshot
from tilelab.views.passes.data import PassesData, passes_data, passes_texts
from tilelab.views.passes.snapshot import passes_snapshot, passes_title
from tilelab.views.profile.data import profile_data
from tilelab.views.profile.snapshot import profile_snapshot
from tilelab.views.source import source_data, source_host, source_snapshot
from tilelab.views.widgets import ExplorerWidget, bundle_problem

__all__ = ["PROFILE_TAB", "TABS", "ExplorerView", "explorer_html"]

TABS = ("Overview", "Passes", "Source", "Layouts", "Machine code")
_TAB_SPECS = (
    {"id": "overview", "title": "Overview", "kind": "overview", "request": "overview"},
    {"id": "passes", "title": "Passes", "kind": "passes"},
    {"id": "source", "title": "Source", "kind": "linked", "request": "source"},
    {"id": "layouts", "title": "Layouts", "kind": "layouts", "request": "layouts"},
    {"id": "machine", "title": "Machine code", "kind": "machine", "request": "machine"},
)
PROFILE_TAB = "Profile"  # shown after TABS when the record has a profile
_PROFILE_SPEC = {"id": "profile", "title": PROFILE_TAB, "kind": "profile", "request": "profile"}


def _tab_specs(record: KernelRecord) -> tuple[dict[str, str], ...]:
    if not record.ok:  # the error and, when some ran, the passes before it: the other tabs would be empty
        return tuple(spec for spec in _TAB_SPECS if spec["id"] == "overview" or (spec["id"] == "passes" and record.passes))
    return _TAB_SPECS + ((_PROFILE_SPEC,) if record.profile is not None else ())


class ExplorerView(BundleView):
    """One record as a tabbed widget plus a static HTML snapshot.

    Parameters
    ----------
    record
        The :class:`~tilelab.records.KernelRecord` to show; failed records show
        their error (with its line) on the Overview and whatever ran before it.

    Notes
    -----
    Synced state is small: the pass rows (no IR), the selections and the tab.
    Pass IR, diffs, IR search results and the sources travel on request
    (anywidget custom messages), and so do the Layouts tab's data and tiles.
    """

    def __init__(self, record: KernelRecord) -> None:
        self.record = record
        self._snapshot_of = record  # the record the static snapshot shows (refresh: its newer version)
        self._core: Any = None
        self._unsubscribe: Any = None

    @property
    def core(self):
        """The :class:`~tilelab.views.widgets.ExplorerWidget` (tabs, passes, source)."""
        _ = self.widget
        return self._core

    def select(self, tab: str) -> None:
        """Show tab ``tab`` (one of :data:`TABS`, or :data:`PROFILE_TAB` when the record has a profile)."""
        specs = {spec["title"]: spec["id"] for spec in _tab_specs(self.record)}
        if tab not in specs:
            raise ValueError(f"tab {tab!r} is not one of {tuple(specs)}")
        self.core.tab = specs[tab]

    def select_pass(self, name_or_index: str | int, base: int | None = None) -> None:
        """Show the Passes tab with pass ``name_or_index`` (a name picks its first run) diffed against ``base``."""
        record = self.record
        index = record.pass_named(name_or_index).index if isinstance(name_or_index, str) else int(name_or_index)
        if index not in {p.index for p in record.passes}:
            raise ValueError(f"no pass with index {index} in {record.name}")
        self.select("Passes")
        self.core.base_index = -1 if base is None else int(base)
        self.core.pass_index = index

    def refresh(self, newest: KernelRecord) -> None:
        """Show ``newest``, this record replaced (its machine code arrived), in the static snapshot from now on.

        The live tabs ask the registry for the newest record themselves; the snapshot is what a saved
        notebook keeps, and is built again on its next use.
        """
        if newest.id != self.record.id:
            raise ValueError(f"record {newest.id} is not a version of {self.record.id}")
        if newest is not self._snapshot_of:
            self._snapshot_of, self._html = newest, None

    def live_key(self) -> tuple[str, str]:
        return ("explorer", self.record.id)

    def widget_problem(self) -> str | None:
        return bundle_problem()

    def _build_widget(self):
        record = self.record
        passes, summary = PassesData(record.passes), passes_data(record)
        machine = MachineData(lambda: _newest(record))
        handlers = {
            "overview": lambda _content: overview_data(_newest(record)),  # its machine code arrives in the background
            "diff": passes.diff,
            "ir": passes.ir,
            "search": passes.search,
            "source": lambda _content: source_data(_newest(record)),  # its note follows the machine code too
            "host": lambda _content: source_host(record),
            "machine": machine.summary,
            "machine_code": machine.panes,
            "machine_listing": machine.listing,
            "layouts": lambda _content: layouts_data(record),
            "layout_tile": lambda content: tile_reply(record.layouts, content),
        }
        if record.profile is not None:
            handlers["profile"] = lambda _content: profile_data(_with_newest_machine_code(record))
        core = ExplorerWidget(
            handlers,
            kind="explorer",
            title=self._title(),
            tabs=[dict(spec) for spec in _tab_specs(record)],
            passes=summary,
            pass_index=summary["first"],
        )
        core.add_class("tilelab-explorer")
        self._core = core
        self._follow_machine_code()
        return core

    def _follow_machine_code(self) -> None:
        """Until the record's machine code arrives (the magic builds it in the background), watch for its replacement."""

        record = self.record
        if not record.has_cuda_source or record.machine_code is not None or self._unsubscribe is not None:
            return
        self._unsubscribe = default_registry().subscribe(self._on_registry)
        if _newest(record).machine_code is not None:  # it arrived before we subscribed
            self._on_registry("record", _newest(record))

    def _on_registry(self, event: str, item: Any) -> None:
        core = self._core
        closed = core is None or core.comm is None
        arrived = event == "record" and item.id == self.record.id and item.machine_code is not None
        if (closed or arrived) and self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if arrived and not closed:
            self.refresh(item)
            core.machine_updates += 1  # the tabs that show machine code ask again

    def _title(self) -> str:
        record = self.record
        return f"{record.name} ({record.arch}, {'failed' if not record.ok else record.mode.value})"

    def _build_html(self) -> str:
        return explorer_html(self._snapshot_of)

    def _text(self) -> str:
        record = self.record
        if not record.ok:
            message = record.error.message.splitlines()[0] if record.error and record.error.message else "unknown error"
            return f"<TileLab Explorer {record.name} ({record.arch}) failed: {message}>"
        changed = sum(1 for p in record.passes if p.changed)
        return f"<TileLab Explorer {record.name} ({record.arch}, {record.mode.value}): {len(record.passes)} passes, {changed} changed, {len(record.layouts)} layouts>"


def explorer_html(record: KernelRecord) -> str:
    """The Explorer's static snapshot: Overview, Passes, Source and Layouts as ``<details>`` sections."""

    head = f"TileLab Explorer — {record.name} ({record.arch}, {'failed' if not record.ok else record.mode.value})"
    return (
        f"<div class='tilelab-explorer' data-tilelab='explorer' data-record-id='{escape(record.id)}' style='{BOX}'>"
        f"<div style='font-weight:600;font-size:14px'>{escape(head)}</div>"
        + details("Overview", overview_snapshot(overview_data(record)), open_=True, attrs=" data-section='overview'")
        + _passes_section(record)
        + details("Source", source_snapshot(source_data(record)), attrs=" data-section='source'")
        + details(f"Layouts ({len(record.layouts)})", layouts_snapshot(layouts_data(record)), attrs=" data-section='layouts'")
        + _machine_section(record)
        + _profile_section(record)
        + "</div>"
    )


def _passes_section(record: KernelRecord) -> str:
    data = passes_data(record)
    return details(passes_title(data), passes_snapshot(data, passes_texts(record)), attrs=" data-section='passes'")


def _machine_section(record: KernelRecord) -> str:
    """The Machine code section (resources, occupancy, instruction classes, SASS, PTX) when the record has it."""
    data = machine_data(record)
    if data["head"] is None:
        return ""
    return details("Machine code", machine_snapshot(data, machine_texts(record)), attrs=" data-section='machine'")


def _profile_section(record: KernelRecord) -> str:
    """The Profile section when the record carries an ncu profile."""
    if record.profile is None:
        return ""
    return details(PROFILE_TAB, profile_snapshot(profile_data(record)), attrs=" data-section='profile'")


def _with_newest_machine_code(record: KernelRecord) -> KernelRecord:
    """``record`` as shown (its profile), with the machine code its newest version has (placing warp samples needs it)."""
    machine_code = _newest(record).machine_code
    return record if machine_code is None else record.with_machine_code(machine_code)


def _newest(record: KernelRecord) -> KernelRecord:
    """The newest version of ``record`` (the magic replaces it when its machine code arrives in the background)."""

    try:
        return default_registry().get(record.id)
    except KeyError:
        return record  # a record shown without the magic (tilelab.explore) is not in the registry
