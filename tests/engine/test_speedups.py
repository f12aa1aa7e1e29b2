"""The shortcuts of the second speed round behave exactly like what they replace."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tables.engine.actions import Action, ActionKind
from tables.engine.cards import RANKS, SUITS, parse_card, parse_cards
from tables.engine.phh import _toml
from tables.engine.positions import CLOCKWISE_GETTERS, clockwise_order, clockwise_tuple
from tables.engine.pots import Pot, build_pots


def test_clockwise_tuple_is_the_clockwise_order() -> None:
    for n in range(1, 13):
        for start in range(n):
            expected = [(start + k) % n for k in range(n)]
            assert clockwise_tuple(start, n) == tuple(expected)
            assert clockwise_order(start, n) == expected
            if 2 <= n <= 10:
                items = [f"p{k}" for k in range(n)]
                assert CLOCKWISE_GETTERS[n][start](items) == tuple(items[k] for k in expected)


def test_parse_card_accepts_every_case_and_nothing_else() -> None:
    for card, (rank, suit) in enumerate((r, s) for r in RANKS for s in SUITS):
        for text in (
            rank + suit,
            rank.lower() + suit,
            rank + suit.upper(),
            rank.lower() + suit.upper(),
        ):
            assert parse_card(text) == card
    for text in ("", "A", "Ax", "1s", "Ass", " As"):
        with pytest.raises(ValueError):
            parse_card(text)
    assert parse_cards("AsKd 2c") == [51, 45, 0]
    with pytest.raises(ValueError, match="'Xx'"):
        parse_cards("AsXx")


def test_single_pot_shortcut_matches_the_general_case() -> None:
    assert build_pots([1, 2, 3], [100, 100, 40], [True, True, False]) == [Pot(240, (1, 2))]
    assert build_pots([1, 2, 3], [100, 100, 100], [True, True, True]) == [Pot(300, (1, 2, 3))]
    # A folded player above the live level: the general case adds the leftover.
    assert build_pots([1, 2], [300, 100], [False, True]) == [Pot(400, (2,))]


def test_toml_writes_what_json_would_for_strings() -> None:
    for text in ("p1", "", 'say "hi"', "back\\slash", "tab\there", "caf\u00e9", "\x7f"):
        assert _toml(text) == json.dumps(text)
        assert _toml([text, 1]) == f"[{json.dumps(text)}, 1]"
    assert _toml([1, True, [2]]) == "[1, true, [2]]"
    assert _toml([]) == "[]"


def test_action_kind_is_normalised_with_the_fast_init() -> None:
    assert Action("fold", 3) == Action.fold(3)  # type: ignore[arg-type]
    assert type(Action("check", 1).kind) is ActionKind  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Action("dance", 1)  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Action.fold(1).seat = 2  # type: ignore[misc]
