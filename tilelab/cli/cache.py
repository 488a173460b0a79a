"""``tilelab cache`` and ``%tilelang cache``: list TileLang's kernel cache, or prune it (a dry run unless ``--yes``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tilelab import cache_dir

__all__ = ["CacheUsageError", "configure", "magic_command", "run"]


class CacheUsageError(ValueError):
    """Bad ``cache`` arguments: one line."""


def _typed(parse: Any, name: str) -> Any:
    def read(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    read.__name__ = name
    return read


def configure(parser: argparse.ArgumentParser, parser_class: type = argparse.ArgumentParser) -> None:
    """Add ``[--dir DIR] [prune --older-than AGE --max-size SIZE --duplicates --yes]`` to ``parser``."""
    where = "TileLang's cache directory (default $TILELANG_CACHE_DIR, else ~/.tilelang/cache)"
    parser.add_argument("--dir", type=Path, help=where)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=parser_class)
    prune = actions.add_parser("prune", help="remove entries: a dry run that lists them, unless --yes")
    prune.add_argument("--dir", type=Path, default=argparse.SUPPRESS, help=where)
    prune.add_argument("--older-than", type=_typed(cache_dir.parse_age, "age"), metavar="AGE", help="entries unused for AGE (30d, 12h, 2w)")
    prune.add_argument("--max-size", type=_typed(cache_dir.parse_size, "size"), metavar="SIZE",
                       help="then the least recently used, until the cache fits in SIZE (5G, 500M)")  # fmt: skip
    prune.add_argument("--duplicates", action="store_true", help="entries with the same generated code as a newer one")
    prune.add_argument("--yes", action="store_true", help="delete them (without it nothing is deleted)")


def run(options: argparse.Namespace) -> list[str]:
    """What ``cache`` prints: the listing, or the prune plan (carried out with ``--yes``)."""
    listing = cache_dir.list_cache(options.dir)
    if options.dir is not None and not listing.directory.is_dir():
        raise CacheUsageError(f"--dir {options.dir}: no such directory")
    if options.action != "prune":
        return listing.lines()
    if options.older_than is None and options.max_size is None and not options.duplicates:
        raise CacheUsageError("prune needs --older-than AGE, --max-size SIZE or --duplicates (it removes nothing by default)")
    plan = cache_dir.plan_prune(listing, options.older_than, options.max_size, options.duplicates)
    if options.yes:
        cache_dir.remove(plan)
    return plan.lines(done=options.yes)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise CacheUsageError(message)


def magic_command(words: list[str]) -> str | None:
    """``%tilelang cache ...``: the text to print (None after ``--help``, which argparse printed)."""
    parser = _Parser(prog="%tilelang cache", description="TileLang's kernel cache: entries, size, duplicates; prune")
    configure(parser, _Parser)
    try:
        options = parser.parse_args(words)
    except SystemExit:  # --help
        return None
    return "\n".join(run(options))
