"""The filter typed above the tuning view's rows: which of a sweep's rows to show.

A filter is terms separated by spaces, and a row is shown when it meets every one:

- ``column=value``, ``column!=value``: the row's value is (is not) ``value``; numbers by value (``block_M=128``),
  anything else as text, in any case (``status=ok``); an empty ``value`` is a missing one (``error=``: no error);
- ``column<value``, ``<=``, ``>``, ``>=``: the row's value is a number beyond ``value`` (``latency_ms<0.25``);
- a word alone: some value of the row holds it as text, in any case (``ptxas``, ``error`` for every failed status);
- ``|`` between values: any of them (``block_M=64|128``, ``status!=ok|timeout``: neither, ``ptxas|nvcc``);
- double quotes keep spaces inside a term (``"shared memory"``, ``error="out of"``).

A filter that cannot be read (an unknown column, ``<`` with no number, an open quote) raises :class:`FilterError`
with one line that says why, and which columns there are.
"""

from __future__ import annotations

import math
import numbers
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["FilterError", "RowFilter", "filter_for", "parse_filter", "term_for"]

_COMPARISON = re.compile(r"^(?P<column>[^=!<>]+?)(?P<op>!=|<=|>=|=|<|>)(?P<value>.*)$")
_ORDERINGS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


class FilterError(ValueError):
    """A filter that cannot be read; its text is the one line the view shows."""


@dataclass(frozen=True)
class _Term:
    column: str | None  # None: a word alone, looked for in every value
    op: str
    values: tuple[str, ...]  # the alternatives (one for an ordering)

    def holds(self, row: Mapping[str, Any]) -> bool:
        if self.column is None:
            texts = [_text(value).casefold() for value in row.values()]
            return any(word.casefold() in text for word in self.values for text in texts)
        value = row.get(self.column)
        if self.op in _ORDERINGS:
            return _number(value) and _ORDERINGS[self.op](float(value), float(self.values[0]))
        return any(_equal(value, wanted) for wanted in self.values) == (self.op == "=")


@dataclass(frozen=True)
class RowFilter:
    """A parsed filter: ``text`` as typed, and its terms."""

    text: str
    terms: tuple[_Term, ...]

    def matches(self, row: Mapping[str, Any]) -> bool:
        """Whether ``row`` (column name to plain value: str, int, float, bool or None) meets every term."""
        return all(term.holds(row) for term in self.terms)


def parse_filter(text: str | None, columns: Sequence[str], shown: Sequence[str] | None = None) -> RowFilter | None:
    """``text`` read against the rows' ``columns``; None for no filter (nothing but spaces). An unknown column's
    message lists the ``shown`` ones (default: all)."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        words = shlex.split(text)
    except ValueError as error:  # shlex's "No closing quotation"
        raise FilterError(f"{error} in the filter") from None
    return RowFilter(text.strip(), tuple(_term(word, columns, columns if shown is None else shown) for word in words))


def filter_for(values: Mapping[str, Any]) -> str | None:
    """The filter that keeps the rows with these ``values`` (column name to value): ``block_M=64 block_N=128``
    (:func:`term_for` each); None where one cannot be typed."""
    terms = [term for name, value in values.items() if (term := term_for(name, [value])) is not None]
    return " ".join(terms) if terms and len(terms) == len(values) else None


def term_for(name: str, values: Sequence[Any]) -> str | None:
    """The term that keeps the rows whose ``name`` is any of ``values``: ``block_M=64|128``, quoted where a value has a
    space (``'layout=row major'``); None where none can be typed (an ``=`` in the name, a ``|`` in a value, an empty
    one): the term is read back, and must say just that."""
    texts = tuple(_text(value) for value in values)
    if not texts or not all(texts) or any("|" in text for text in texts):
        return None
    word = f"{name}={'|'.join(texts)}"
    if not _one_word(word):  # a space or a quote in it: quoted as a whole
        word = shlex.quote(word)
    try:
        read = parse_filter(word, [name])
    except FilterError:
        return None
    said = [(term.column, term.op, term.values) for term in read.terms] if read is not None else []
    return word if said == [(name, "=", texts)] else None


def _one_word(text: str) -> bool:
    try:
        return shlex.split(text) == [text]
    except ValueError:  # shlex's "No closing quotation"
        return False


def _term(word: str, columns: Sequence[str], shown: Sequence[str]) -> _Term:
    found = _COMPARISON.match(word)
    if found is None:
        return _Term(None, "has", tuple(alternative for alternative in word.split("|") if alternative) or (word,))
    column, op, value = found["column"].strip(), found["op"], found["value"].strip()
    named = _column(column, columns)
    if named is None:
        raise FilterError(f"{word}: there is no column {column!r} (the columns: {', '.join(shown)})")
    if op in _ORDERINGS and "|" in value:
        raise FilterError(f"{word}: {op} compares with one number (| gives alternatives to = and !=)")
    if op in _ORDERINGS and not _parses_as_number(value):
        raise FilterError(f"{word}: {op} compares numbers, and {value!r} is not one")
    return _Term(named, op, tuple(value.split("|")))


def _column(name: str, columns: Sequence[str]) -> str | None:
    """``name`` as the table spells it: exactly, else the one column that matches it in any case."""
    if name in columns:
        return name
    alike = [column for column in columns if column.casefold() == name.casefold()]
    return alike[0] if len(alike) == 1 else None


def _equal(value: Any, wanted: str) -> bool:
    if wanted == "":
        return value is None or value == ""
    if _number(value) and _parses_as_number(wanted):
        return math.isclose(float(value), float(wanted), rel_tol=1e-9, abs_tol=0.0)
    return _text(value).casefold() == wanted.casefold()


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _parses_as_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)
