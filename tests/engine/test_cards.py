"""Card ids and their text form (tables/engine/cards.py)."""

import subprocess
import sys
from pathlib import Path

import pytest
from phevaluator.card import Card

from tables.engine.cards import (
    FULL_DECK,
    RANKS,
    SUITS,
    card_str,
    cards_str,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)

ROOT = Path(__file__).resolve().parents[2]


def test_ids_are_rank_times_four_plus_suit() -> None:
    assert parse_card("2c") == 0
    assert parse_card("2s") == 3
    assert parse_card("Td") == 8 * 4 + 1
    assert parse_card("As") == 51
    assert [rank_of(51), suit_of(51)] == [12, 3]
    assert RANKS == "23456789TJQKA"
    assert SUITS == "cdhs"


def test_full_deck_is_52_distinct_ids_in_order() -> None:
    assert tuple(range(52)) == FULL_DECK


@pytest.mark.parametrize("card", FULL_DECK)
def test_text_round_trips_and_matches_phevaluator_ids(card: int) -> None:
    text = card_str(card)
    assert parse_card(text) == card
    assert Card(text).id_ == card
    assert text == RANKS[rank_of(card)] + SUITS[suit_of(card)]


def test_parse_card_accepts_either_case() -> None:
    assert parse_card("ts") == parse_card("TS") == parse_card("Ts")


@pytest.mark.parametrize("text", ["", "A", "1s", "10s", "Ax", "sA", "As ", "Asd", "  "])
def test_parse_card_rejects_bad_text_with_a_clear_message(text: str) -> None:
    with pytest.raises(ValueError, match="invalid card"):
        parse_card(text)


def test_parse_cards_reads_compact_or_spaced_text() -> None:
    assert parse_cards("AsKd") == parse_cards("As Kd") == [51, 45]
    assert parse_cards(" As\tKd\n2c ") == [51, 45, 0]
    assert parse_cards("") == []


@pytest.mark.parametrize("text", ["AsK", "As Kx", "As 1d"])
def test_parse_cards_rejects_bad_text(text: str) -> None:
    with pytest.raises(ValueError, match="invalid card"):
        parse_cards(text)


def test_cards_str_concatenates() -> None:
    assert cards_str([51, 45, 0]) == "AsKd2c"
    assert cards_str(()) == ""
    assert parse_cards(cards_str(FULL_DECK)) == list(FULL_DECK)


@pytest.mark.parametrize("card", [-1, 52, 100])
def test_card_str_rejects_ids_outside_the_deck(card: int) -> None:
    with pytest.raises(ValueError, match="invalid card id"):
        card_str(card)


def test_card_layer_imports_no_django() -> None:
    code = (
        "import sys\n"
        "import tables.engine.cards, tables.engine.deck, tables.engine.evaluator\n"
        "assert not any(name.split('.')[0] == 'django' for name in sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


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
