"""Tuning spaces: which keyword arguments are swept, and the configs they make.

A space is the product of the ``choices`` given to :func:`tilelab.tune`,
filtered by ``where``; or an explicit iterable of config dicts (a generator is
fine, as in TileLang's JIT tutorial). Keyword arguments that are not
``choices`` are fixed and passed through to every compile.
"""

from __future__ import annotations

import inspect
import itertools
import json
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Choices", "Space", "choices", "config_key", "int_parameters", "mistyped"]


@dataclass(frozen=True)
class Choices:
    """The values one keyword argument is swept over."""

    values: tuple[Any, ...]

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"choices({list(self.values)!r})"


def choices(values: Iterable[Any]) -> Choices:
    """Mark a keyword argument of :func:`tilelab.tune` as swept over ``values``.

    Parameters
    ----------
    values
        The values to try, in order; at least one, no duplicates.

    Examples
    --------
    >>> choices([64, 128, 256])
    choices([64, 128, 256])
    """
    if isinstance(values, (str, bytes)):
        raise TypeError(f"choices() needs a list of values, got the string {values!r}")
    items = tuple(values)
    if not items:
        raise ValueError("choices() needs at least one value")
    if len(set(map(repr, items))) != len(items):
        raise ValueError(f"choices() got duplicate values: {list(items)!r}")
    return Choices(items)


def config_key(config: Mapping[str, Any]) -> str:
    """A canonical text of ``config`` (sorted keys): the identity of a config in rows and the store."""
    return json.dumps({str(k): _plain(v) for k, v in sorted(config.items())}, sort_keys=True)


def _plain(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return repr(value)


def int_parameters(function: Callable) -> frozenset[str]:
    """The parameters of ``function`` that take an int: annotated ``int``, or an int by default."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return frozenset()
    return frozenset(p.name for p in parameters if _says_int(p.annotation) or _is_int(p.default))


def mistyped(values: Mapping[str, Any], int_params: Iterable[str]) -> str | None:
    """``block_M=64.5: expected an int`` when a value of ``int_params`` is not an int; else None."""
    wrong = [f"{name}={values[name]!r}" for name in int_params if name in values and not _is_int(values[name])]
    return f"{', '.join(sorted(wrong))}: expected an int" if wrong else None


def _says_int(annotation: Any) -> bool:
    return annotation is int or (isinstance(annotation, str) and annotation == "int")  # never == on TVM objects


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass(frozen=True)
class Space:
    """The configs of one sweep and the keyword arguments fixed for all of them."""

    configs: tuple[dict[str, Any], ...]
    fixed: dict[str, Any]
    swept: tuple[str, ...]

    @classmethod
    def build(
        cls,
        kwargs: Mapping[str, Any],
        where: Callable[[dict[str, Any]], bool] | None = None,
        configs: Iterable[Mapping[str, Any]] | None = None,
    ) -> Space:
        """Split ``kwargs`` into swept and fixed arguments and list the configs.

        Raises
        ------
        ValueError
            When the space is empty, ``configs`` is mixed with ``choices``, or a
            swept value is unhashable (a dict, list or set: rows are grouped and
            kept by their values; a tuple or a string is).
        """
        swept = {name: value for name, value in kwargs.items() if isinstance(value, Choices)}
        fixed = {name: value for name, value in kwargs.items() if not isinstance(value, Choices)}
        if configs is not None:
            if swept:
                raise ValueError(f"give either configs= or choices(), not both (choices for {', '.join(swept)})")
            listed = [dict(config) for config in configs]
            for config in listed:
                if not isinstance(config, dict) or not all(isinstance(k, str) for k in config):
                    raise ValueError(f"each config must be a dict of keyword arguments, got {config!r}")
        else:
            names = list(swept)
            listed = [dict(zip(names, values, strict=True)) for values in itertools.product(*swept.values())]
        _check_hashable(listed)
        if where is not None:
            listed = [config for config in listed if where(config)]
        listed = _unique(listed)
        if not listed:
            raise ValueError("the tuning space is empty: `where` rejected every config, or configs= gave none")
        names = tuple(dict.fromkeys(name for config in listed for name in config))
        overlap = set(names) & set(fixed)
        if overlap:
            raise ValueError(f"{', '.join(sorted(overlap))} is both fixed and swept; drop one")
        return cls(tuple(listed), fixed, names)

    def __len__(self) -> int:
        return len(self.configs)


def _check_hashable(configs: list[dict[str, Any]]) -> None:
    """Refuse a swept value that tables cannot group by and the history cannot keep faithfully (a dict, list, set)."""
    for config in configs:
        for name, value in config.items():
            try:
                hash(value)
            except TypeError:
                shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
                raise ValueError(
                    f"{name}={shown}: a swept value must be hashable, not a {type(value).__name__} "
                    "(rows are grouped and stored by their values); use a tuple or a string, or pass it fixed"
                ) from None


def _unique(configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    kept = []
    for config in configs:
        key = config_key(config)
        if key not in seen:
            seen.add(key)
            kept.append(config)
    return kept
