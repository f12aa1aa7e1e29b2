"""A hand run twice at the table, read back through the hand-history API (issue #16):
both boards in the record, both runs in the PHH (which replays through the engine to
the same stacks) and the PokerStars text."""

import pytest

from tables.formats.phh import replay_phh
from tables.models import Hand, HandStatus
from tables.services import play
from tests.kit import (
    StakeLevelFactory,
    api_for,
    deal,
    stacked_deck_forced,
    table_with_players,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def run_twice_hand():
    table, (alice, bob) = table_with_players(StakeLevelFactory(run_it_twice=True), 2)
    with stacked_deck_forced(
        {1: "AhAd", 2: "KhKd"}, "2s5c9c3h8d" + "KsKc7d4s6h", button=1, seats=[1, 2]
    ):
        deal(table)
    play.hand_act(table_id=table.id, user=alice, kind="bet_raise", amount=10_000)
    play.hand_act(table_id=table.id, user=bob, kind="call")
    play.hand_run_twice(table_id=table.id, user=bob, agree=True)
    play.hand_run_twice(table_id=table.id, user=alice, agree=True)
    hand = Hand.objects.get(table=table)
    assert hand.status == HandStatus.FINISHED
    return hand, alice


def test_the_record_has_both_boards(run_twice_hand):
    hand, alice = run_twice_hand
    body = api_for(alice).get(f"/api/hands/{hand.id}/").json()
    assert body["board"] == ["2s", "5c", "9c", "3h", "8d"]
    assert body["boards"] == [["2s", "5c", "9c", "3h", "8d"], ["Ks", "Kc", "7d", "4s", "6h"]]
    # 20000, rake 300 once (the cap): 9850 on each board.
    assert body["rake"] == 300
    assert {s["seat"]: s["final_stack"] for s in body["seats"]} == {1: 9850, 2: 9850}
    types = [e["type"] for e in body["events"]]
    assert types.count("run_twice_answered") == 2 and "run_twice_decided" in types


def test_the_auditors_phh_replays_both_runs(run_twice_hand, auditor):
    hand, _ = run_twice_hand
    text = api_for(auditor).get(f"/api/hands/{hand.id}/phh").content.decode()
    assert "_run_twice = true" in text and "# run 2: d db KsKc7d" in text
    state, again = replay_phh(text)
    assert again == text
    assert sorted(state.stacks) == [9850, 9850]


def test_the_pokerstars_text_shows_both_boards(run_twice_hand):
    hand, alice = run_twice_hand
    text = api_for(alice).get(f"/api/hands/{hand.id}/text").content.decode()
    assert "*** SECOND FLOP *** [Ks Kc 7d]" in text
    assert "FIRST Board [2s 5c 9c 3h 8d]" in text and "SECOND Board [Ks Kc 7d 4s 6h]" in text
