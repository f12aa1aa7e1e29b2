"""A fast reader for the plain TOML that PHH files are made of, with ``tomllib`` behind it.

PHH files (ours and pokerkit's) are flat: one ``key = value`` per line (bare keys), the
values being integers, decimals, booleans, strings without escapes, one-line arrays of
those, literal strings and ``HH:MM:SS`` times; blank lines and comments between them.
:func:`loads` reads exactly that subset, several times faster than ``tomllib``, and hands
anything else (tables, escapes, multi-line or nested arrays, dates, literal strings or
times in arrays, a repeated key...) to ``tomllib.loads(text, parse_float=Decimal)``, so
every valid TOML file loads and every invalid one raises ``tomllib.TOMLDecodeError``.
What the fast path accepts, it returns exactly as ``tomllib`` would
(``tests/engine/test_phh_toml.py`` compares the two).

Most values are read by JSON's scanner, which is written in C: a TOML string without
escapes, integer, decimal (exponent or not), boolean or array of those is written
exactly as in JSON and means the same. Where JSON accepts more, the text is refused
before or after the scan: any backslash (JSON's escapes are not TOML's) or DEL character
in the text (JSON strings may hold DEL), and any result other than a str, int, bool,
Decimal or a flat list of those (``null``, objects, ``NaN``, nested arrays). JSON refuses
raw control characters in strings, as TOML does, apart from the tab (those values go to
tomllib). Literal strings and times are read with a regular expression; the keys, blanks
and comments are checked with others. ``tomllib`` and ``datetime`` are imported only for
the files that need them.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

# JSON's C scanner, with JSON decimals read as TOML decimals are here (parse_float=Decimal).
_scan_json = json.JSONDecoder(parse_float=Decimal).scan_once
# What a value read by _scan_json may be (a list: of the others, checked apart).
_SCALAR_TYPES = frozenset((str, int, bool, Decimal))
# The keys of a text, one a line: bare keys only (quoted and dotted keys go to tomllib).
_KEYS = re.compile(r"(?:[ \t]*[A-Za-z0-9_-]+[ \t]*\n)*")
# Keys (with the blanks around them) already found bare: files mostly have the same keys,
# and a set look-up costs less than the regular expression. Kept to a bounded size.
_BARE_KEYS: set[str] = set()
_MAX_BARE_KEYS = 1000
# What may follow a value on its line, and all of a blank or comment line: a comment may
# hold any character but the control ones (tab aside).
_END = re.compile(r"[ \t]*(?:#[^\x00-\x08\x0a-\x1f\x7f]*)?")
# The values JSON does not read: a literal string or a local time; a time must not run on
# into other characters ("12:30:00.5").
_OTHER_VALUE = re.compile(
    r"'([^'\x00-\x1f\x7f]*)'|([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?![0-9.])"
)


def loads(text: str) -> dict[str, Any]:
    """Read a TOML text as ``tomllib.loads(text, parse_float=Decimal)`` does."""
    data = _loads_plain(text)
    if data is None:
        import tomllib  # here: plain PHH files do not need it

        data = tomllib.loads(text, parse_float=Decimal)
    return data


def _loads_plain(text: str) -> dict[str, Any] | None:
    """The fields of a text in the plain subset; None for any other text."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:  # a carriage return alone
            return None
    if "\\" in text or "\x7f" in text:
        return None
    data: dict[str, Any] = {}
    keys: list[str] = []
    for line in text.split("\n"):
        key, equals, rest = line.partition("=")
        if not equals or "#" in key:  # no key: the line must be blank or a comment
            if _END.fullmatch(line) is None:
                return None
            continue
        value_text = rest.lstrip(" \t")
        value, end = _value(value_text)
        if end != len(value_text) and (end < 0 or _END.fullmatch(value_text, end) is None):
            return None
        keys.append(key)
        data[key.strip(" \t")] = value
    if len(data) != len(keys):
        return None  # tomllib reports the repeated key
    if not _BARE_KEYS.issuperset(keys):
        if _KEYS.fullmatch("\n".join(keys) + "\n") is None:
            return None
        if len(_BARE_KEYS) < _MAX_BARE_KEYS:
            _BARE_KEYS.update(keys)
    return data


def _value(text: str) -> tuple[Any, int]:
    """The value at the start of ``text`` and where it ends (-1: not a plain value)."""
    try:
        value, end = _scan_json(text, 0)
    except (StopIteration, ValueError, RecursionError):  # not JSON, or bad JSON
        value, end = None, -1
    kind = type(value)
    if kind is list:
        if _SCALAR_TYPES.issuperset(map(type, value)):
            return value, end
        return None, -1
    if kind in _SCALAR_TYPES and (end == len(text) or text[end] in " \t#"):
        return value, end
    # Not JSON, or JSON that stops too early to be the whole TOML value ("12" of
    # "12:30:00", "1" of "1_000").
    match = _OTHER_VALUE.match(text)
    if match is None:
        return None, -1
    literal, hour, minute, second = match.groups()
    if literal is not None:
        return literal, match.end()
    import datetime  # here: only files with a time need it

    return datetime.time(int(hour), int(minute), int(second)), match.end()
