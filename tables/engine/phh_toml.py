"""A fast reader for the plain TOML that PHH files are made of, with ``tomllib`` behind it.

PHH files (ours and pokerkit's) are flat: one ``key = value`` per line, the values being
integers, decimals, booleans, strings without escapes, ``HH:MM:SS`` times and one-line
arrays of those. :func:`loads` reads exactly that subset with a few regular expressions,
several times faster than ``tomllib``, and hands anything else (tables, escapes,
multi-line arrays, dates, exponents, a repeated key...) to
``tomllib.loads(text, parse_float=Decimal)``, so every valid TOML file loads and every
invalid one raises ``tomllib.TOMLDecodeError``. What the fast path accepts, it returns
exactly as ``tomllib`` would (``tests/engine/test_phh_toml.py`` compares the two).
"""

from __future__ import annotations

import datetime
import re
import tomllib
from decimal import Decimal
from typing import Any

# Bare keys only; quoted and dotted keys go to tomllib.
_KEY = re.compile(r"[ \t]*([A-Za-z0-9_-]+)[ \t]*=[ \t]*")
# One value; a number or boolean must not run on into other characters ("1e5", "12:30").
_VALUE = re.compile(
    r'"([^"\\\x00-\x1f\x7f]*)"'  # 1: basic string without escapes or control characters
    r"|'([^'\x00-\x1f\x7f]*)'"  # 2: literal string
    r"|(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?(?![0-9A-Za-z_.:+-])"  # 3, 4: integer, decimal part
    r"|(true|false)(?![0-9A-Za-z_-])"  # 5: boolean
    r"|([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?![0-9.])"  # 6-8: local time
)
_COMMA = re.compile(r"[ \t]*,[ \t]*")
# Whole arrays of basic strings or of integers (the actions, stacks...), read in C.
_STRING = r'"([^"\\\x00-\x1f\x7f]*)"'
_INTEGER = r"(-?(?:0|[1-9][0-9]*))"
_STRINGS = re.compile(rf"\[[ \t]*(?:{_STRING}[ \t]*,[ \t]*)*(?:{_STRING}[ \t]*)?\]")
_INTEGERS = re.compile(rf"\[[ \t]*(?:{_INTEGER}[ \t]*,[ \t]*)*(?:{_INTEGER}[ \t]*)?\]")
_STRING_ITEM = re.compile(_STRING)
_INTEGER_ITEM = re.compile(_INTEGER)
# The end of a line: a comment may hold any character but the control ones (tab aside).
_END = re.compile(r"[ \t]*(?:#[^\x00-\x08\x0a-\x1f\x7f]*)?")


class _NotPlain(Exception):
    """The text leaves the plain subset: let tomllib read it."""


def loads(text: str) -> dict[str, Any]:
    """Read a TOML text as ``tomllib.loads(text, parse_float=Decimal)`` does."""
    try:
        return _loads_plain(text)
    except _NotPlain:
        return tomllib.loads(text, parse_float=Decimal)


def _loads_plain(text: str) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:  # a carriage return alone
            raise _NotPlain
    for line in text.split("\n"):
        key_match = _KEY.match(line)
        if key_match is None:
            if _END.fullmatch(line) is None:  # neither blank nor a comment
                raise _NotPlain
            continue
        key = key_match.group(1)
        if key in data:
            raise _NotPlain  # tomllib reports the repeated key
        pos = key_match.end()
        if line.startswith("[", pos):
            if strings := _STRINGS.match(line, pos):
                value, pos = _STRING_ITEM.findall(line, pos, strings.end()), strings.end()
            elif integers := _INTEGERS.match(line, pos):
                items = _INTEGER_ITEM.findall(line, pos, integers.end())
                value, pos = [int(item) for item in items], integers.end()
            else:
                value, pos = _array(line, pos + 1)
        else:
            value, pos = _scalar(line, pos)
        if _END.fullmatch(line, pos) is None:
            raise _NotPlain
        data[key] = value
    return data


def _array(line: str, pos: int) -> tuple[list[Any], int]:
    """The one-line array whose ``[`` ends before ``pos``; the position after its ``]``."""
    items: list[Any] = []
    pos = _skip_space(line, pos)
    while not line.startswith("]", pos):
        value, pos = _scalar(line, pos)
        items.append(value)
        comma = _COMMA.match(line, pos)
        if comma is not None:
            pos = comma.end()
        else:
            pos = _skip_space(line, pos)
            if not line.startswith("]", pos):
                raise _NotPlain
    return items, pos + 1


def _skip_space(line: str, pos: int) -> int:
    """The position of the first character at or after ``pos`` that is not a blank."""
    while line.startswith((" ", "\t"), pos):
        pos += 1
    return pos


def _scalar(line: str, pos: int) -> tuple[Any, int]:
    """The value starting at ``pos`` and the position after it."""
    match = _VALUE.match(line, pos)
    if match is None:
        raise _NotPlain
    basic, literal, integer, fraction, boolean, hour, minute, second = match.groups()
    value: Any
    if basic is not None:
        value = basic
    elif literal is not None:
        value = literal
    elif integer is not None:
        value = Decimal(integer + fraction) if fraction else int(integer)
    elif boolean is not None:
        value = boolean == "true"
    else:
        value = datetime.time(int(hour), int(minute), int(second))
    return value, match.end()
