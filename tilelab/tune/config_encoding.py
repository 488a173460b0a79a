"""Configs as Optuna parameters: per swept name, the index of its value (ordered when all are numbers).

Numbers are sampled as ordered indices (64 lies between 32 and 128); other
values as categories. A config that lacks a swept name has the value ``<absent>``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from numbers import Real
from typing import Any

from tilelab.tune.samplers import CandidatePool
from tilelab.tune.space import config_key


class ConfigEncoding:
    """Configs as Optuna parameters: per swept name, the index of its value (ordered when all are numbers)."""

    def __init__(self, configs: Sequence[dict[str, Any]], swept: Sequence[str]) -> None:
        from optuna.distributions import CategoricalDistribution, IntDistribution

        self.configs = list(configs)
        self.names = list(swept)
        self.values: dict[str, list[Any]] = {}
        self.distributions = {}
        for name in self.names:
            values = _unique(config.get(name, _ABSENT) for config in configs)
            if all(isinstance(v, Real) and not isinstance(v, bool) for v in values):
                values.sort()
                self.distributions[name] = IntDistribution(0, max(len(values) - 1, 0))
            else:
                self.distributions[name] = CategoricalDistribution(tuple(range(len(values))))
            self.values[name] = values
        self.keys = [self.key(config) for config in self.configs]  # by position
        self.positions = {key: position for position, key in enumerate(self.keys)}

    def params(self, config: dict[str, Any]) -> dict[str, int]:
        return {name: _position(self.values[name], config.get(name, _ABSENT)) for name in self.names}

    def key(self, config: dict[str, Any]) -> tuple[int, ...]:
        return tuple(self.params(config).values())

    def position(self, params: dict[str, int]) -> int | None:
        """Where the config of ``params`` is in the space; None when the space does not hold it."""
        return self.positions.get(tuple(params[name] for name in self.names))

    def pool(self, untried: Callable[[], Iterable[int]]) -> Any:
        """A :class:`~tilelab.tune.samplers.CandidatePool` of the configs at the positions ``untried()`` gives."""

        return CandidatePool(
            self.names, self.values, self.distributions, lambda: [self.keys[p] for p in sorted(untried())]
        )


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()


def _unique(values: Iterable[Any]) -> list[Any]:
    seen, kept = set(), []
    for value in values:
        key = value if value is _ABSENT else config_key({"v": value})
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return kept


def _position(values: list[Any], value: Any) -> int:
    if value is _ABSENT:
        return values.index(_ABSENT)
    key = config_key({"v": value})
    return next(i for i, v in enumerate(values) if v is not _ABSENT and config_key({"v": v}) == key)
