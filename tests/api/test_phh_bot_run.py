"""A bot-like run through the table services: every PHH the API serves for it either
replays in pokerkit to the recorded stacks or carries a marker of a rule PHH readers
play otherwise (issue #13, "Hand histories that replay").

Players buy in for the minimum and decide as the bots do (`tables.bots.strategy`), so
stacks run short and blinds are posted all-in for less (finer points 17-18,
``_short_blind``); newcomers sit down asking to post a live big blind, and a player who
sat out comes back the same way (a negative ``blinds_or_straddles`` entry, pokerkit's
post bet). Our own reader replays every file to the same text (round trip).

Not marked, and not met here: the pot- and no-limit case where short all-ins on both
sides of a reopening let a player raise that pokerkit refuses
(``test_pokerkit_differs_finer_point_19_short_all_ins_on_both_sides_of_a_reopening``).
"""

import random
import tomllib

import pytest

from accounts.models import User
from tables.bots.strategy import PROFILES, choose_action
from tables.engine.deck import shuffled_deck
from tables.engine.events import event_from_dict
from tables.engine.state import HandState
from tables.formats.phh import replay_phh
from tables.models import Hand, Seat, Table
from tables.services import hands, play, seating
from tests.engine import pokerkit_adapter as pka
from tests.kit import api_for, deal, funded_player, sit, stake_for, table_with_players

pytestmark = pytest.mark.django_db

HANDS = 40
#: Markers of rules PHH readers play otherwise (tables/formats/phh.py).
MARKERS = ("_short_blind", "_short_all_in_cap", "_kill", "_overblind", "_chop", "_allin_protection")


def _play_out(table: Table, hand: Hand, rng: random.Random, profiles: dict[int, int]) -> Hand:
    """Play the hand just dealt to its end with bot decisions (a profile per user); the
    blinds may have put everyone all-in already."""
    players = {s.number: s.player for s in Seat.objects.filter(table=table)}
    hand.refresh_from_db()
    state = HandState.from_dict(hand.state)
    while not state.over:
        user = players[state.actor]
        profile = PROFILES[profiles.setdefault(user.id, rng.randrange(len(PROFILES)))]
        decision = choose_action(state.legal_actions().to_dict(), rng=rng, profile=profile)
        play.hand_act(table_id=table.id, user=user, kind=decision.action, amount=decision.amount)
        hand.refresh_from_db()
        state = HandState.from_dict(hand.state)
    return hand


def _comings_and_goings(table: Table, rng: random.Random, buy_in: int) -> None:
    """Between hands: the busted leave; a newcomer takes a free seat asking to post, a
    player sits out, or one who sat out comes back posting."""
    for busted in Seat.objects.filter(table=table, stack=0).select_related("player"):
        seating.seat_leave(table_id=table.id, user=busted.player)
    seated = Seat.objects.filter(table=table).select_related("player").order_by("number")
    seats = {s.number: s for s in seated}
    free = [n for n in range(1, table.seats + 1) if n not in seats]
    roll = rng.random()
    if free and roll < 0.3:
        sit_down(table, funded_player(), rng.choice(free), buy_in=buy_in)
    elif roll < 0.4:
        playing = [s for s in seats.values() if s.status == "active" and s.stack > 0]
        if len(playing) > 3:
            seating.seat_sit_out(table_id=table.id, user=rng.choice(playing).player)
    elif roll < 0.6:
        away = [s for s in seats.values() if s.status == "sitting_out" and s.stack > 0]
        if away:
            seating.seat_sit_in(table_id=table.id, user=away[0].player, post_big_blind=True)


def sit_down(table: Table, user: User, number: int, *, buy_in: int) -> None:
    seating.seat_take(
        table_id=table.id,
        user=user,
        seat_number=number,
        buy_in=buy_in,
        post_big_blind=True,
        idempotency_key=f"phh-bot-run-{table.id}-{number}-{user.id}",
    )


@pytest.mark.parametrize(
    ("game", "structure"), [("holdem", "NL"), ("omaha", "PL"), ("holdem", "FL")]
)
def test_every_served_phh_of_a_bot_run_replays_in_pokerkit_or_is_marked(
    game, structure, auditor, monkeypatch
):
    rng = random.Random(f"phh-bot-run/{game}/{structure}")
    # The run's decks come from a seeded shuffle (the only thing replaced), so that the
    # run, and what it covers, is the same every time.
    decks = random.Random(f"phh-bot-run/decks/{game}/{structure}")
    monkeypatch.setattr(hands, "shuffled_deck", lambda: shuffled_deck(decks))
    stake = stake_for(game, structure)
    buy_in = stake.buy_in_min
    table, _users = table_with_players(stake, 3, buy_in=buy_in)
    profiles: dict[int, int] = {}
    client = api_for(auditor)
    seen = {"replayed": 0, "post_bet_replayed": 0, "short_blind": 0}
    for _ in range(HANDS):
        _comings_and_goings(table, rng, buy_in)
        dealt = deal(table)
        if dealt is None:
            # Too many busted or away: fresh players sit down (dealt in at once).
            for number in range(1, table.seats + 1):
                if not Seat.objects.filter(table=table, number=number).exists():
                    sit(table, funded_player(), number, buy_in=buy_in)
            dealt = deal(table)
            assert dealt is not None
        hand = _play_out(table, dealt, rng, profiles)
        response = client.get(f"/api/hands/{hand.id}/phh")
        assert response.status_code == 200
        text = response.content.decode()
        assert replay_phh(text)[1] == text  # our reader plays what we write
        fields = tomllib.loads(text)
        if any(fields.get(marker) for marker in MARKERS):
            seen["short_blind"] += bool(fields.get("_short_blind"))
            continue
        state = HandState.from_dict(hand.state)
        if pka.lowless_side_pot(state):
            continue  # a known pokerkit difference (tests/engine/test_differential.py)
        events = [event_from_dict(e.data) for e in hand.events.order_by("seq")]
        pka.assert_phh_replays(state, events, text)
        seen["replayed"] += 1
        seen["post_bet_replayed"] += min(fields["blinds_or_straddles"]) < 0
    # The run had what it is about: newcomers' post bets that pokerkit replayed, and
    # short blinds, marked.
    assert seen["replayed"] >= HANDS // 2, seen
    assert seen["post_bet_replayed"] >= 1, seen
    assert seen["short_blind"] >= 1, seen
