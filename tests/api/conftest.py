"""Fixtures of the hand-history API tests: a showdown hand with a shown and a mucked
hand, its players, an outsider and an auditor, and API clients for each of them."""

from dataclasses import dataclass

import pytest

from accounts.models import User
from tables.models import Hand, Table
from tests.kit import (
    funded_player,
    play_passively,
    stacked_deck_forced,
    stake_for,
    table_with_players,
)


@dataclass
class Showdown:
    """Hold'em NL, seats 1-3, button seat 1 (alice), everyone checks it down.

    Bob (seat 2) shows first with the winning set of aces; Carol (seat 3, kings) and
    Alice (seat 1, 7-2) cannot win and muck (auto-muck). Dave sits at no table.
    """

    table: Table
    hand: Hand
    alice: User
    bob: User
    carol: User
    dave: User


ALICE, BOB, CAROL = "7c2d", "AsAh", "KsKh"
BOARD = "AdKd5c9s3h"


@pytest.fixture
def showdown(db) -> Showdown:
    table, (alice, bob, carol) = table_with_players(stake_for("holdem", "NL"))
    with stacked_deck_forced({1: ALICE, 2: BOB, 3: CAROL}, BOARD, button=1, seats=[1, 2, 3]):
        hand = play_passively(table)
    return Showdown(table, hand, alice, bob, carol, funded_player())
