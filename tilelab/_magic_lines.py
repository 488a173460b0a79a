"""``%tilelang`` line forms: the line read into a subcommand, and the subcommands that only read the session.

``list``, ``show``, ``diff``, ``why`` and ``cache`` live here; :class:`tilelab.magic.TileLangMagics`
dispatches them (and ``traceback``, ``tune``). Bad input is one :class:`UsageError` line.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from tilelab._line import LineError, unquoted, words
from tilelab.changes import record_changes
from tilelab.cli.cache import CacheUsageError, magic_command
from tilelab.runs import RunsError, pick_runs, why_of_runs
from tilelab.views import record_view
from tilelab.views.compare import CompareView

SUBCOMMANDS = ("list", "show", "diff", "why", "cache", "traceback", "tune")


def subcommand(line: str) -> tuple[str, list[str]]:
    """The subcommand of ``%tilelang LINE`` and its words (quoted words unquoted)."""
    try:
        said = [unquoted(word) for word in words(line)]
    except LineError as exc:
        raise UsageError(f"%tilelang {exc}") from None
    if not said or said[0] not in SUBCOMMANDS:
        raise UsageError(f"%tilelang {line!r}: use one of {', '.join(SUBCOMMANDS)} (or %%tilelang as a cell magic)")
    return said[0], said[1:]


def show(registry: Any, rest: list[str]) -> Any:
    """``%tilelang show NAME``: the Explorer of the kernel's latest record."""
    if len(rest) != 1:
        raise UsageError("usage: %tilelang show NAME")
    record = registry.latest(rest[0])
    if record is None:
        raise UsageError(f"no kernel called {rest[0]!r} compiled in this session; %tilelang list shows them")
    return record_view(record)


def diff(registry: Any, rest: list[str]) -> Any:
    """``%tilelang diff NAME [A B]``: the comparison of two runs (default: the last two)."""
    if not rest:
        raise UsageError("usage: %tilelang diff NAME [A B]  (run numbers; default: the last two)")
    try:
        before, after, first, second = pick_runs(registry, rest[0], rest[1:])
    except RunsError as exc:
        raise UsageError(str(exc)) from None
    print("\n".join([f"run {first} -> run {second}", *record_changes(before, after).lines()[1:]]))
    return CompareView(before, after)


def why(registry: Any, rest: list[str]) -> None:
    """``%tilelang why NAME [A B]``: which components of TileLang's cache key changed (default: the last two runs)."""
    if not rest:
        raise UsageError("usage: %tilelang why NAME [A B]  (run numbers; default: the last two)")
    try:
        print(why_of_runs(registry, rest[0], rest[1:]).text())
    except RunsError as exc:
        raise UsageError(str(exc)) from None


def cache(rest: list[str]) -> None:
    """``%tilelang cache [prune ...]``: TileLang's kernel cache, as ``tilelab cache`` lists or prunes it."""
    try:
        text = magic_command(rest)
    except CacheUsageError as exc:
        raise UsageError(f"%tilelang cache: {exc}") from None
    if text:
        print(text)


def list_records(registry: Any) -> Any:
    """``%tilelang list``: one row per record of the session."""
    import pandas as pd

    rows = [record.summary() for record in registry.records()]
    columns = ["name", "status", "mode", "arch", "passes", "compile_s", "threads", "error", "id"]
    # Whole numbers, missing where a kernel has none (a CPU or failed one): not floats beside NaN.
    return pd.DataFrame(rows, columns=columns).astype({"passes": "Int64", "threads": "Int64"})
