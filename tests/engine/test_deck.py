"""Shuffling and the published deck commitment (tables/engine/deck.py, RULES.md section 9)."""

import hashlib
import random
import re

from hypothesis import assume, given
from hypothesis import strategies as st

from tables.engine.cards import FULL_DECK
from tables.engine.deck import deck_commitment, new_salt, shuffled_deck, verify_commitment

SALT = "00112233445566778899aabbccddeeff" * 2
decks = st.permutations(FULL_DECK)
salts = st.binary(min_size=32, max_size=32).map(bytes.hex)


def test_shuffled_deck_is_a_permutation_of_52_cards() -> None:
    deck = shuffled_deck()
    assert len(deck) == 52
    assert sorted(deck) == list(FULL_DECK)


def test_shuffled_deck_is_reproducible_with_a_seeded_generator() -> None:
    assert shuffled_deck(random.Random(7)) == shuffled_deck(random.Random(7))
    assert shuffled_deck(random.Random(7)) != shuffled_deck(random.Random(8))


def test_shuffled_deck_is_fresh_every_time() -> None:
    assert shuffled_deck() != shuffled_deck()


def test_shuffled_deck_puts_every_card_everywhere() -> None:
    rng = random.Random(2024)
    seen_first = {shuffled_deck(rng)[0] for _ in range(2000)}
    seen_last = {shuffled_deck(rng)[-1] for _ in range(2000)}
    assert seen_first == seen_last == set(FULL_DECK)


def test_new_salt_is_32_random_bytes_in_hex() -> None:
    salt = new_salt()
    assert re.fullmatch(r"[0-9a-f]{64}", salt)
    assert new_salt() != salt


def test_known_vector_recomputed_with_hashlib() -> None:
    deck = list(FULL_DECK)  # "2c2d2h2s3c...AhAs"
    codes = "".join(rank + suit for rank in "23456789TJQKA" for suit in "cdhs")
    expected = hashlib.sha256((codes + SALT).encode("ascii")).hexdigest()
    assert deck_commitment(deck, SALT) == expected
    assert (
        deck_commitment(deck, SALT)
        == hashlib.sha256(
            b"2c2d2h2s3c3d3h3s4c4d4h4s5c5d5h5s6c6d6h6s7c7d7h7s8c8d8h8s9c9d9h9s"
            b"TcTdThTsJcJdJhJsQcQdQhQsKcKdKhKsAcAdAhAs" + SALT.encode("ascii")
        ).hexdigest()
    )


@given(decks, salts)
def test_commitment_is_deterministic_and_verifies(deck: list[int], salt: str) -> None:
    commitment = deck_commitment(deck, salt)
    assert re.fullmatch(r"[0-9a-f]{64}", commitment)
    assert deck_commitment(list(deck), salt) == commitment
    assert verify_commitment(deck, salt, commitment)


@given(decks, salts, st.integers(0, 50))
def test_commitment_changes_when_two_cards_swap(deck: list[int], salt: str, i: int) -> None:
    swapped = list(deck)
    swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
    assert deck_commitment(swapped, salt) != deck_commitment(deck, salt)
    assert not verify_commitment(swapped, salt, deck_commitment(deck, salt))


def test_commitment_changes_when_one_card_changes() -> None:
    deck = shuffled_deck(random.Random(1))
    other = [*deck[:-1], (deck[-1] + 1) % 52]
    assert deck_commitment(other, SALT) != deck_commitment(deck, SALT)


@given(decks, salts, salts)
def test_commitment_changes_with_the_salt(deck: list[int], salt: str, other: str) -> None:
    assume(salt != other)
    assert deck_commitment(deck, salt) != deck_commitment(deck, other)
    assert not verify_commitment(deck, other, deck_commitment(deck, salt))


def test_verify_commitment_refuses_malformed_commitments() -> None:
    deck = list(FULL_DECK)
    good = deck_commitment(deck, SALT)
    assert verify_commitment(deck, SALT, good)
    assert not verify_commitment(deck, SALT, good.upper())
    assert not verify_commitment(deck, SALT, good[:-1])
    assert not verify_commitment(deck, SALT, "")
    assert not verify_commitment(deck, SALT, "é" * 64)
