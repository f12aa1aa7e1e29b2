"""The fast PHH/TOML reader (tables/engine/phh_toml.py) reads exactly what tomllib reads.

Every text is read by both; they must agree on the values *and their types* (``1`` vs
``True`` vs ``Decimal("1.0")``) or both refuse it with ``tomllib.TOMLDecodeError``.
"""

from __future__ import annotations

import datetime
import random
import sys
import tomllib
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tables.engine import phh_toml
from tests.engine.test_phh import golden

PIECES = [
    "1",
    "-0",
    "+1",
    "01",
    "1_000",
    "1e5",
    "0.05",
    "-1.50",
    "1.",
    ".5",
    "inf",
    "nan",
    "NaN",
    "Infinity",
    "null",
    "-1.5e-3",
    "0e5",
    "1E05",
    "true",
    "false",
    "True",
    "trueish",
    '"p1 cc"',
    '"p3 cc # timeout"',
    '"tab\there"',
    '"esc\\"aped"',
    '"\\u00e9"',
    "'literal # not a comment'",
    "'''multi'''",
    '"""multi"""',
    '""',
    "''",
    '"caf\u00e9"',
    "12:30:00",
    "24:00:00",
    "12:30:00.5",
    "12:30",
    "1979-05-27",
    "1979-05-27T07:32:00Z",
    "[]",
    "[ ]",
    "[1, 2, 3]",
    "[1,2,]",
    "[,]",
    '["a", "b" ]',
    "[[1], [2]]",
    "[1, 'x', true, 0.5]",
    "[1 2]",
    "[1, null]",
    '["a\\tb"]',
    '["a\tb"]',
    '"del\x7f"',
    '{"a": 1}',
    "[[1], 2]",
    "{a = 1}",
    "[",
    "",
]
SUFFIXES = ["", " ", "\t", " # comment", "#", " # \x01", " x", "\r"]
KEYS = ["a", "_rake", "seat-count", "9", "a.b", '"quoted"', "", "a b"]


def read_both(text: str) -> tuple[Any, Any]:
    """(tomllib's result, fast reader's result); an exception class stands for a refusal."""
    try:
        expected: Any = tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError:
        expected = tomllib.TOMLDecodeError
    try:
        got: Any = phh_toml.loads(text)
    except tomllib.TOMLDecodeError:
        got = tomllib.TOMLDecodeError
    return typed(expected), typed(got)


def typed(value: Any) -> Any:
    """``value`` with the type of every leaf next to its repr (True != 1 here)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value), repr(value))  # repr: Decimal("NaN") equals itself


@pytest.mark.parametrize("piece", PIECES)
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_every_value_form_reads_like_tomllib(piece: str, suffix: str) -> None:
    for text in (f"k = {piece}{suffix}\n", f"k = {piece}{suffix}", f"  k={piece}{suffix}\r\n"):
        expected, got = read_both(text)
        assert got == expected, repr(text)


# The values the fast path reads itself (the others go to tomllib).
FAST_PIECES = [
    "1",
    "-0",
    "1e5",
    "0.05",
    "-1.50",
    "true",
    "false",
    '"p1 cc"',
    '"p3 cc # timeout"',
    "'literal # not a comment'",
    '""',
    "''",
    '"caf\u00e9"',
    "12:30:00",
    "[]",
    "[ ]",
    "[1, 2, 3]",
    '["a", "b" ]',
    '[1, "x", true, 0.5]',
]


@pytest.mark.parametrize("piece", FAST_PIECES)
@pytest.mark.parametrize("suffix", ["", " ", "\t", " # comment", "#"])
def test_plain_values_take_the_fast_path(piece: str, suffix: str) -> None:
    for text in (f"k = {piece}{suffix}\n", f"k = {piece}{suffix}", f"  k={piece}{suffix}\r\n"):
        assert phh_toml._loads_plain(text) is not None, repr(text)
        expected, got = read_both(text)
        assert got == expected, repr(text)
    assert phh_toml._loads_plain(f"# comment\n\nk = {piece}\nk2 = 1\n") is not None


@pytest.mark.parametrize("key", KEYS)
def test_keys_read_like_tomllib(key: str) -> None:
    expected, got = read_both(f"{key} = 1\n")
    assert got == expected


@pytest.mark.parametrize(
    "text",
    [
        "a = 1\na = 2\n",  # repeated key
        "[table]\na = 1\n",
        "# only a comment\n\n\t\n",
        "a = 1\r\nb = 2\r\n",
        "a = 1\rb = 2\n",
        "a = 1\n\x00\n",
        "\ufeffa = 1\n",
        "a = [\n  1,\n  2,\n]\n",
        "a = 1 b = 2\n",
    ],
)
def test_whole_texts_read_like_tomllib(text: str) -> None:
    expected, got = read_both(text)
    assert got == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES + SUFFIXES + KEYS + [" = ", "\n", ",", "[", "]"])))
def test_random_texts_read_like_tomllib(parts: list[str]) -> None:
    expected, got = read_both("".join(parts))
    assert got == expected


def test_our_exports_take_the_fast_path_and_read_like_tomllib(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tables.engine.phh import PhhMeta, export_phh

    state, events = golden()
    meta = PhhMeta(
        table="T 1",
        seat_count=9,
        time=datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
        currency="USD",
        salt="ab" * 32,
    )
    text = export_phh(state, events, meta)
    expected = typed(tomllib.loads(text, parse_float=Decimal))
    monkeypatch.setitem(sys.modules, "tomllib", None)  # the fast path must not import it
    assert typed(phh_toml.loads(text)) == expected


def test_a_random_mix_of_lines_reads_like_tomllib() -> None:
    rng = random.Random(5)
    for _ in range(300):
        lines = [
            f"{rng.choice(KEYS)} = {rng.choice(PIECES)}{rng.choice(SUFFIXES)}"
            for _ in range(rng.randint(1, 6))
        ]
        expected, got = read_both("\n".join(lines) + rng.choice(["", "\n"]))
        assert got == expected
