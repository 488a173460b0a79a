"""The one reader of ``%%tilelang`` and ``%tilelang`` lines (options, subcommands, ``tune``), so all read alike.

Words are split on whitespace outside quotes and brackets, and keep their text:
a tuning value stays a Python literal (``dtype='float16'``, ``block=[64, 128]``).
:func:`unquoted` then gives an option's plain value: ``--arch 'sm_80'`` and
``--arch=sm_80`` both read ``sm_80``. Bad input is a :class:`LineError` of one
line naming the word where it starts.
"""

from __future__ import annotations

__all__ = ["LineError", "option_words", "unquoted", "words"]

_OPENERS = {"(": ")", "[": "]", "{": "}"}


class LineError(ValueError):
    """A line that cannot be split into words (an unbalanced quote or bracket)."""


def words(line: str) -> list[str]:
    """The words of ``line``: whitespace outside quotes and brackets separates them; their text is kept.

    Raises
    ------
    LineError
        For an unbalanced quote or bracket, naming the word it starts in.
    """
    found: list[str] = []
    current: list[str] = []
    closers: list[str] = []  # the brackets and the quote still open, innermost last
    start = 0  # where the current word starts
    for index, char in enumerate(line):
        if not current:
            start = index
        if closers and closers[-1] in "'\"":
            if char == closers[-1]:
                closers.pop()
        elif char in "'\"":
            closers.append(char)
        elif char in _OPENERS:
            closers.append(_OPENERS[char])
        elif char in ")]}":
            if not closers or closers[-1] != char:
                raise LineError(f"unbalanced {char!r} in {_word_at(line, start)!r}")
            closers.pop()
        elif char.isspace() and not closers:
            if current:
                found.append("".join(current))
            current = []
            continue
        current.append(char)
    if closers:
        what = "quote" if closers[-1] in "'\"" else f"bracket (no closing {closers[-1]!r})"
        raise LineError(f"unbalanced {what} in {_word_at(line, start)!r}")
    if current:
        found.append("".join(current))
    return found


def _word_at(line: str, start: int) -> str:
    """The text from ``start`` to the next whitespace: enough to find the bad word, never the whole line."""
    end = next((i for i in range(start, len(line)) if line[i].isspace()), len(line))
    return line[start:end]


def unquoted(word: str) -> str:
    """``word`` without one pair of matching outer quotes (``'sm_80'`` -> ``sm_80``); other words unchanged."""
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word


def option_words(line: str) -> list[str]:
    """The words of an options line, each value unquoted (``--arch 'sm_80'``, ``--arch='sm_80'``), for argparse."""
    plain = []
    for word in words(line):
        key, sep, value = word.partition("=")
        plain.append(f"{key}={unquoted(value)}" if word.startswith("--") and sep else unquoted(word))
    return plain
