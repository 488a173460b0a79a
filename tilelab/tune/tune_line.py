"""``%tilelang tune NAME [ARGS...] key=v1,v2 ...`` read into a kernel and :func:`tilelab.tune.api.tune`'s arguments.

Values are Python literals or names of the notebook; ``key=v1,v2`` sweeps ``key``;
``where`` is an expression over the parameters; options may be written ``--key value``.
Anything unreadable is a :class:`ValueError` of one line naming the token.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from typing import Any

from tilelab._line import unquoted, words
from tilelab.tune.budget import looks_like_duration
from tilelab.tune.space import choices

_OPTIONS = (
    "where", "reference", "flops", "bytes", "target", "arch", "timeout", "workers", "force", "db", "rtol", "atol",
    "search", "budget", "seed", "sampler", "prune", "rebench", "resources", "cluster",
)  # fmt: skip
_FLAGS = ("force", "prune")  # options that may be written without a value
_WORDS = ("target", "arch", "search", "sampler")  # options whose value may be a bare word
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def parse_tune_line(line: str, user_ns: dict[str, Any]) -> tuple[Any, list[Any], dict[str, Any]]:
    """The kernel that ``line`` names in ``user_ns``, and the positional and keyword arguments of its ``tune``.

    Raises
    ------
    ValueError
        With one line naming the token that could not be read.
    """
    tokens = words(line)
    if tokens[:1] == ["tune"]:
        tokens = tokens[1:]
    if not tokens:
        raise ValueError("usage: %tilelang tune NAME [ARGS...] param=v1,v2,... [timeout=S] [target=c]")
    name, *rest = tokens
    if name not in user_ns:
        raise ValueError(f"no kernel named {name!r} in the notebook")
    args, kwargs = [], {}
    remaining = iter(rest)
    for written in remaining:
        token = _option(written, remaining) if written.startswith("--") else written
        key, sep, text = token.partition("=")
        if not sep:
            if kwargs:
                raise ValueError(f"positional argument {token!r} after keyword arguments")
            args.append(_value(token, text=token, user_ns=user_ns))
        elif not _NAME.match(key):
            raise ValueError(f"{token!r}: {key!r} is not a parameter name")
        elif key == "where":
            kwargs[key] = _where(token, unquoted(text))
        elif key in _WORDS and _NAME.match(text):
            kwargs[key] = text
        elif key == "budget" and looks_like_duration(unquoted(text)):
            kwargs[key] = unquoted(text)  # budget=3m: a wall-clock budget
        else:
            values = _values(token, text, user_ns)
            if len(values) > 1 and key in _OPTIONS:
                raise ValueError(f"{token!r}: {key} takes one value")
            kwargs[key] = choices(values) if len(values) > 1 else values[0]
    return user_ns[name], args, kwargs


def check_tune_line(line: str) -> None:
    """Raise the ValueError :func:`parse_tune_line` raises for ``line``'s shape, before any of its names exist
    (the command line checks its words so before it imports the kernel's file)."""
    parse_tune_line(line, _EveryName())


class _EveryName(dict):
    """A namespace in which every name is bound, each to a stand-in of its own."""

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.isidentifier()

    def __missing__(self, key: str) -> _StandIn:
        return _StandIn(key)


class _StandIn:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def _option(token: str, remaining: Iterator[str]) -> str:
    """``--force``, ``--arch=sm_80`` or ``--arch sm_80`` as ``key=value``."""
    key, sep, text = token[2:].partition("=")
    if key not in _OPTIONS:
        raise ValueError(f"{token!r} is not an option of %tilelang tune (options: {', '.join('--' + o for o in _OPTIONS)})")
    if key in _FLAGS and not sep:
        return f"{key}=True"
    if not sep:
        text = next(remaining, None)
        if text is None:
            raise ValueError(f"{token!r} needs a value")
    return f"{key}={text}"


def _values(token: str, text: str, user_ns: dict[str, Any]) -> list[Any]:
    try:
        items = ast.parse(f"[{text}]", mode="eval").body.elts
    except SyntaxError:
        raise ValueError(f"cannot read {token!r}: expected comma-separated Python literals") from None
    if not items:
        raise ValueError(f"{token!r} has no value")
    return [_value(token, ast.get_source_segment(f"[{text}]", item), user_ns) for item in items]


def _value(token: str, text: str, user_ns: dict[str, Any]) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if _NAME.match(text) and text in user_ns:
            return user_ns[text]
        raise ValueError(f"cannot read {token!r}: {text!r} is not a Python literal nor a name in the notebook") from None


def _where(token: str, expression: str) -> Callable[[dict[str, Any]], bool]:
    try:
        code = compile(expression, "<where>", "eval")
    except SyntaxError:
        raise ValueError(f"{token!r}: {expression!r} is not a Python expression") from None

    def where(config: dict[str, Any]) -> bool:
        try:
            return bool(eval(code, {"__builtins__": {}}, dict(config)))
        except NameError as exc:
            raise ValueError(f"{token!r}: {exc.name!r} is not a swept parameter (where= sees {', '.join(config)})") from None
        except Exception as exc:  # the user's expression: whatever it raises is one line about it
            raise ValueError(f"{token!r} fails for {config}: {type(exc).__name__}: {exc}") from None

    return where
