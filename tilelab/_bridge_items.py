"""What the bridge serves of a record or a tuning run: its summary, its static snapshot, its live view.

:mod:`tilelab.bridge` speaks the protocol; this module shapes what the replies carry.
A view that cannot be rendered is a :class:`RenderError` (the bridge answers it as an
``error`` of code ``"render"``); a live view that cannot be built is a reason, not an error.
"""

from __future__ import annotations

import html
import math
from typing import Any

from tilelab.registry import Registry
from tilelab.views import view_for
from tilelab.views._bundle import live_bundle

ECHO_LIMIT = 200  # characters of a request repeated in a reply or the log
_READS = 5  # tries at reading a tuning run a sweep is changing on another thread


class RenderError(ValueError):
    """A view raised while rendering its snapshot; the message says which item and why, in one line."""


def record_summary(registry: Registry, record: Any, runs: list[dict] | None = None, same_name: list | None = None) -> dict:
    """The panel's summary of ``record``: ``runs`` (tuning summaries) and ``same_name`` (its kernel's runs) when already at hand."""
    if runs is None:
        runs = [tuning_summary(run) for run in registry.tuning_runs()]
    if same_name is None:
        same_name = runs_by_name(registry.records()).get(record.name, [record])
    latencies = [
        run["best_latency_ms"]
        for run in runs
        if run.get("name") == record.name and _is_number(run.get("best_latency_ms"))
    ]
    ids = [run.id for run in same_name]
    number = ids.index(record.id) + 1 if record.id in ids else len(ids) + 1
    shown_last = registry.latest(record.name)
    return {
        **record.summary(),
        "target": record.target,
        "best_latency_ms": min(latencies, default=None),
        "created": getattr(record, "created", 0.0),
        "run": number,
        "current": shown_last is not None and shown_last.id == record.id,
    }


def runs_by_name(records: list) -> dict[str, list]:
    """The records of each kernel name, oldest compile first (a kernel's runs)."""
    by_name: dict[str, list] = {}
    for record in sorted(records, key=lambda r: getattr(r, "created", 0.0)):
        by_name.setdefault(record.name, []).append(record)
    return by_name


def clip(text: str) -> str:
    """``text`` cut to :data:`ECHO_LIMIT` characters: a request's strings are repeated, never whole."""
    if len(text) <= ECHO_LIMIT:
        return text
    return f"{text[:ECHO_LIMIT]}… ({len(text)} characters)"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def tuning_summary(run: Any) -> dict:
    # The panel's requests arrive on a kernel subshell's thread while a sweep adds rows on the main
    # thread: a summary read mid-insert fails with "dictionary changed size"; the next read sees it whole.
    for attempt in range(_READS):
        try:
            summary = dict(run.summary())
            break
        except RuntimeError:
            if attempt == _READS - 1:
                raise
    summary.setdefault("id", run.id)
    summary.setdefault("detail", _tuning_detail(run))
    return summary


def _tuning_detail(run: Any) -> str:
    """What tells a run from the others of its kernel: ``N=65536 · block × chunk · optuna (tpe), budget 8 · cpu``."""
    fixed = getattr(run, "fixed", None) or {}
    parts = [", ".join(f"{key}={value!r}" for key, value in list(fixed.items())[:6])]
    parts.append(" × ".join(str(name) for name in getattr(run, "swept", ()) or ()))
    search = getattr(run, "search", None)
    parts.append(search.describe() if callable(getattr(search, "describe", None)) else "grid")
    parts.append(str(getattr(run, "device", "") or ""))
    return clip(" · ".join(part for part in parts if part))


def snapshot_html(item: Any, kind: str) -> str:
    """The item's static HTML snapshot (an escaped summary table if it has none)."""
    try:
        view = view_for(item)
        to_html = getattr(view, "to_html", None)
        if callable(to_html):
            text = to_html()
        else:
            # Only the snapshot is wanted, never the live widget.
            bundle = view._repr_mimebundle_(include={"text/html"}) if hasattr(view, "_repr_mimebundle_") else None
            bundle = bundle[0] if isinstance(bundle, tuple) else bundle
            text = bundle.get("text/html") if isinstance(bundle, dict) else None
    except Exception as error:
        # The edge between the kernel and the panel: a broken view must become a
        # message in the panel, not a traceback in whatever cell runs next.
        message = f"could not render the {kind}: {type(error).__name__}: {clip(str(error))}"
        raise RenderError(message) from error
    if isinstance(text, str):
        return text
    return summary_table(tuning_summary(item) if kind == "tuning" else item.summary())


def live_view_bundle(item: Any, kind: str) -> tuple[dict | None, str | None]:
    """The live view's widget bundle (the notebook's own widget when it shows the record), or None and why not."""
    try:
        bundle = live_bundle(view_for(item))
    except Exception as error:
        # The edge between the kernel and the panel: a view that cannot be built becomes a reason, and
        # the panel falls back to the snapshot (which reports its own errors).
        return None, f"could not build the live view: {type(error).__name__}: {clip(str(error))}"
    if bundle is None:
        return None, "the live view's front-end is not built here (its widget bundle is missing)"
    return bundle, None


def summary_table(summary: dict) -> str:
    rows = "".join(
        f"<tr><th>{html.escape(str(key))}</th><td>{html.escape(str(value))}</td></tr>" for key, value in summary.items()
    )
    return f"<table class='tilelab-summary'>{rows}</table>"
