"""``tilelab tune``: the command line's sweep through ``%tilelang tune``'s parser, with a tqdm bar."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from tilelab.cli.load import UsageError
from tilelab.registry import default_registry
from tilelab.tune.tune_line import check_tune_line

__all__ = ["check_output", "check_params", "run_tune", "write_rows"]

_FORMATS = (".csv", ".parquet")


def check_output(path: Path) -> None:
    """Refuse, before anything compiles, an output the rows could not be written to."""
    if path.suffix not in _FORMATS:
        raise UsageError(f"--out {path}: expected a .csv or .parquet file")
    if path.suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise UsageError(f"--out {path}: Parquet needs pyarrow (pip install pyarrow); or write rows.csv")
    if not path.parent.is_dir():
        raise UsageError(f"--out {path}: no such directory {path.parent}")
    existed = path.exists()
    try:
        with path.open("ab"):  # the only test that holds for root, read-only mounts and directories alike
            pass
    except OSError as exc:
        raise UsageError(f"--out {path}: cannot write there ({exc.strerror or exc})") from None
    if not existed:
        path.unlink()


def check_params(name: str, tokens: list[str]) -> None:
    """A usage error for a ``PARAM=V1,V2`` that cannot be read, before the kernel's file (and TileLang) is imported."""
    try:
        check_tune_line(" ".join([name, *(_token(token) for token in tokens)]))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def run_tune(name: str, namespace: dict[str, Any], call: tuple[tuple, dict], tokens: list[str], options: dict[str, Any]):
    """Sweep kernel ``name`` of ``namespace`` over ``tokens`` (``key=v1,v2``), showing a progress bar.

    ``call`` holds the ``--args`` positional and keyword arguments; ``options``
    the options of :func:`tilelab.tune` given on the command line (``arch``, ``db``, ...),
    as literals. Argument values travel to ``tune_from_line`` as names bound in
    its namespace, so no object has to be written as text.
    """

    from tilelab.tune.api import tune_from_line  # TileLang's import: after every check of the command line

    bound: dict[str, Any] = {}

    def bind(value: Any) -> str:
        key = f"__tilelab_cli_{len(bound)}__"
        bound[key] = value
        return key

    args, kwargs = call
    words = [name, *(bind(value) for value in args), *(_token(token) for token in tokens)]
    words += [f"{key}={bind(value)}" for key, value in kwargs.items()]
    words += [f"{key}={value!r}" for key, value in options.items()]  # str, int, float or bool: literals
    progress = _Progress()
    words += [f"on_row={bind(progress.on_row)}", "live=False"]
    unsubscribe = default_registry().subscribe(progress.on_event)
    try:
        return tune_from_line(" ".join(words), {**namespace, **bound})
    except ValueError as exc:  # the parser's and tune's own checks: one line about the bad value
        raise UsageError(str(exc)) from None
    finally:
        unsubscribe()
        progress.close()


def _token(token: str) -> str:
    key, sep, text = token.partition("=")
    if not sep or not key.isidentifier():
        raise UsageError(f"{token!r}: expected PARAM=V1,V2,... (e.g. block_M=64,128)")
    if key == "where":
        return f"where={text!r}"  # an expression may hold spaces; the parser unquotes it
    if any(ch.isspace() for ch in text):
        raise UsageError(f"{token!r}: write values without spaces, e.g. {key}=64,128")
    return token


class _Progress:
    """A tqdm bar, started when the sweep starts: its total and count follow the run (history rows count as done)."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.failed = 0

    def on_event(self, event: str, run: Any) -> None:
        if event != "tuning":
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=run.total, initial=run.done, unit="config", desc=run.kernel_name, dynamic_ncols=True)
        self.bar.update(run.done - self.bar.n)

    def on_row(self, row: Any) -> None:
        self.failed += not row.ok
        if self.bar is not None:
            self.bar.set_postfix_str(f"{self.failed} failed" if self.failed else row.status.value, refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def write_rows(result: Any, path: Path, db: str | None = None) -> None:
    """One row per finished config (``TuneResult.to_pandas``) to a CSV or Parquet file.

    A file that could be written before the sweep but not after (a full disk) is one
    line, naming where the rows still are: the history ``db`` (None: the default one).
    """
    frame = result.to_pandas()
    try:
        if path.suffix == ".parquet":
            frame.to_parquet(path, index=False)
        else:
            frame.to_csv(path, index=False)
    except OSError as exc:
        kept = "this run kept no history (--db :memory:)" if db == ":memory:" else "they are in the tuning history"
        raise UsageError(f"--out {path}: cannot write the rows ({exc.strerror or exc}); {kept}") from None
