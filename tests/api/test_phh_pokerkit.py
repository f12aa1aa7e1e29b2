"""Every PHH the API serves, for hands of every game and structure played through the
table services, loads in pokerkit and replays to the recorded finishing stacks.

pokerkit rakes by the file's ``_rake_*`` fields the RULES.md way through the engine
tests' adapter (`tests.engine.pokerkit_adapter.RoomHandHistory`); spread-limit hands are
played with fixed-limit bet sizes so that pokerkit's fixed-limit rules accept them.
Known pokerkit differences (odd-chip placement, hi-lo pots without a qualifying low
among their contenders) are compared the way the engine's differential tests do.
"""

import random
import tomllib
import warnings

import pytest

from tables.engine.events import event_from_dict
from tables.engine.state import HandState
from tables.models import Hand
from tests.engine import pokerkit_adapter as pka
from tests.kit import GAMES, STRUCTURES, api_for, play_hand, stake_for, table_with_players

pytestmark = pytest.mark.django_db

HANDS_PER_TABLE = 3


def assert_replays(hand: Hand, text: str) -> None:
    state = HandState.from_dict(hand.state)
    events = [event_from_dict(e.data) for e in hand.events.order_by("seq")]
    assert f"_rake = {hand.rake}\n" in text
    assert sum(state.stacks) + hand.rake == sum(state.starting_stacks)
    if pka.lowless_side_pot(state):
        return  # a known pokerkit difference (tests/engine/test_differential.py)
    pka.assert_phh_replays(state, events, text)


@pytest.mark.parametrize("game", GAMES)
def test_api_phh_replays_in_pokerkit_for_every_structure(game, auditor):
    client = api_for(auditor)
    hands: list[Hand] = []
    for structure in STRUCTURES:
        rng = random.Random(f"api-phh/{game}/{structure}")
        table, _players = table_with_players(stake_for(game, structure))
        hands += [play_hand(table, rng) for _ in range(HANDS_PER_TABLE)]
    actions = set()
    for hand in hands:
        response = client.get(f"/api/hands/{hand.id}/phh")
        assert response.status_code == 200
        text = response.content.decode()
        assert_replays(hand, text)
        actions |= {a.split()[1] for a in tomllib.loads(text)["actions"] if a[0] == "p"}
        # The other formats of the same hand are served too.
        assert client.get(f"/api/hands/{hand.id}/text").status_code == 200
        ohh = client.get(f"/api/hands/{hand.id}/ohh").json()["ohh"]
        assert round(sum(p["rake"] for p in ohh["pots"]) * 100) == hand.rake
    assert {"f", "cc", "cbr", "sm"} <= actions  # folds, checks/calls, bets/raises, shows
    # The export holds the same files, and pokerkit loads them all at once.
    export = client.get("/api/hands/export", {"format": "phh", "game": game})
    body = b"".join(export.streaming_content).decode()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = list(pka.RoomHandHistory.loads_all(body))
    assert len(loaded) == len(hands)
