"""Straddle and overblind requests (issue #13; RULES §7, finer points 3, 4, 6): each
refusal with its code and reason, an honoured straddle posted and acting last preflop, an
overblind doubling the limits, and every request answered and cleared at the deal."""

import pytest

from tables.engine.state import HandState
from tables.exceptions import (
    BlindOptionCannotCover,
    BlindOptionNotAllowed,
    BlindOptionSeat,
    NotSeated,
)
from tables.models import HandEvent, Seat, Structure
from tables.selectors import table_snapshot
from tables.services import play, seating
from tables.services.blind_options import OVERBLIND, STRADDLE, seat_blind_option_set
from tests.kit import StakeLevelFactory, TableFactory, current, deal, funded_player, key
from tests.tables.test_services import play_passively, users_at

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(monkeypatch):
    """Every message the table commands hand over for publishing (a test transaction never
    commits, so nothing would be sent): the players' private notes are read from them.
    The WebSocket test sees the same notes through the real channel layer."""
    import tables.services.command as recorder

    sent: list = []

    def capture(*, table_id, messages):
        sent.extend(messages)

    monkeypatch.setattr(recorder, "publish_on_commit", capture)
    return sent


def private_notes(published, user, key_name):
    return [
        m.private[user.id][key_name] for m in published if key_name in m.private.get(user.id, {})
    ]


def seated(table, n, *, buy_in=10_000):
    """n players in seats 1..n, seated one after the other (seat 1 first: the button of
    the table's first hand)."""
    players = [funded_player() for _ in range(n)]
    for number, user in enumerate(players, start=1):
        seating.seat_take(
            table_id=table.id, user=user, seat_number=number, buy_in=buy_in, idempotency_key=key()
        )
    return players


def posts(hand) -> list[tuple[str, int, int]]:
    """The hand's forced bets as (kind, seat, amount)."""
    rows = HandEvent.objects.filter(hand=hand, type="posted").values_list("data", flat=True)
    return [(d["kind"], d["seat"], d["amount"]) for d in rows]


def ask(table, user, kind=STRADDLE, wanted=True):
    return seat_blind_option_set(table_id=table.id, user=user, kind=kind, wanted=wanted)


@pytest.fixture
def straddle_table(db):
    stake = StakeLevelFactory(allow_straddle=True)
    return TableFactory(stake_level=stake, seats=6)


@pytest.fixture
def overblind_table(db):
    stake = StakeLevelFactory(
        structure=Structure.FIXED_LIMIT, allow_overblind=True, small_bet=200, big_bet=400
    )
    return TableFactory(stake_level=stake, seats=6)


def test_a_straddle_is_refused_where_the_stake_level_does_not_allow_it(table):
    players = seated(table, 4)
    with pytest.raises(BlindOptionNotAllowed, match="does not allow a straddle"):
        ask(table, players[3])
    assert not Seat.objects.get(player=players[3]).wants_straddle


def test_an_overblind_is_refused_outside_fixed_and_spread_limit(db):
    stake = StakeLevelFactory(allow_overblind=True)  # no limit
    table = TableFactory(stake_level=stake, seats=6)
    players = seated(table, 3)
    with pytest.raises(BlindOptionNotAllowed, match="fixed and spread limit only") as info:
        ask(table, players[0], OVERBLIND)
    assert info.value.code == "blind_option_not_allowed"


def test_a_straddle_is_open_only_to_the_seat_left_of_the_next_big_blind(straddle_table):
    # First hand: button seat 1, blinds seats 2 and 3, so the straddle is seat 4's.
    players = seated(straddle_table, 4)
    for user in players[:3]:
        with pytest.raises(BlindOptionSeat, match="left of the big blind: seat 4") as info:
            ask(straddle_table, user)
        assert info.value.code == "blind_option_seat"
    assert ask(straddle_table, players[3]).wants_straddle


def test_a_straddle_needs_three_players_dealt_in(straddle_table):
    alice, _bob = seated(straddle_table, 2)
    with pytest.raises(BlindOptionSeat, match="three or more players"):
        ask(straddle_table, alice)


def test_a_player_not_dealt_into_the_next_hand_cannot_ask(straddle_table):
    players = seated(straddle_table, 4)
    seating.seat_sit_out(table_id=straddle_table.id, user=players[3])
    with pytest.raises(BlindOptionSeat, match="not dealt into the next hand"):
        ask(straddle_table, players[3], STRADDLE)


def test_a_straddle_the_stack_cannot_cover_in_full_is_refused(db):
    stake = StakeLevelFactory(allow_straddle=True, buy_in_min=300)
    table = TableFactory(stake_level=stake, seats=6)
    players = seated(table, 3)
    seating.seat_take(
        table_id=table.id, user=funded_player(), seat_number=4, buy_in=399, idempotency_key=key()
    )
    straddler = Seat.objects.get(table=table, number=4).player
    with pytest.raises(BlindOptionCannotCover, match=r"\$4\.00 .*you have \$3\.99") as info:
        ask(table, straddler)
    assert info.value.code == "blind_option_cannot_cover"
    assert players  # the three others make the straddle seat exist


def test_a_stranger_cannot_ask(straddle_table):
    seated(straddle_table, 3)
    with pytest.raises(NotSeated):
        ask(straddle_table, funded_player())


def test_an_honoured_straddle_is_posted_acts_last_preflop_and_is_cleared(straddle_table, published):
    players = seated(straddle_table, 4)
    straddler = players[3]
    ask(straddle_table, straddler)
    hand = deal(straddle_table)
    assert ("straddle", 4, 400) in posts(hand)
    _, state = current(straddle_table)
    # Left of the straddle acts first (RULES §3 step 4), and the straddler last.
    assert state.actor == 1
    by_seat = users_at(straddle_table)
    for seat in (1, 2, 3):
        assert state.actor == seat
        assert state.legal_actions().call_amount == 400 - state.committed[seat - 1]
        play.hand_act(table_id=straddle_table.id, user=by_seat[seat], kind="call")
        _, state = current(straddle_table)
    # Nobody raised: the live straddle has the option (check or raise).
    assert state.actor == 4 and state.street == "preflop"
    legal = state.legal_actions()
    assert legal.can_check and legal.can_bet_raise and legal.min_to == 800  # finer point 4
    assert not Seat.objects.get(player=straddler).wants_straddle
    answers = private_notes(published, straddler, "blind_requests")
    assert answers == [
        [
            {
                "kind": "straddle",
                "posted": True,
                "message": "You posted a straddle of $4.00: you act last before the flop.",
            }
        ]
    ]
    # The next hand's straddle seat is seat 1 (button 2, blinds 3 and 4).
    options = private_notes(published, players[0], "blind_options")[-1]
    assert options["straddle"]["open"] is True


def test_a_request_no_longer_eligible_at_the_deal_is_answered_and_cleared(
    straddle_table, published
):
    players = seated(straddle_table, 4)
    ask(straddle_table, players[3])
    # Seat 2 leaves: the first hand has button 1, blinds 3 and 4, and seat 1 is left of
    # the big blind.
    seating.seat_leave(table_id=straddle_table.id, user=players[1])
    hand = deal(straddle_table)
    assert not any(kind == "straddle" for kind, _, _ in posts(hand))
    assert not Seat.objects.get(player=players[3]).wants_straddle
    [[answer]] = private_notes(published, players[3], "blind_requests")
    assert answer["posted"] is False
    assert "for the player left of the big blind, seat 1 in this hand" in answer["message"]


def test_a_cancelled_straddle_is_not_posted(straddle_table):
    players = seated(straddle_table, 4)
    ask(straddle_table, players[3])
    assert not ask(straddle_table, players[3], wanted=False).wants_straddle
    hand = deal(straddle_table)
    assert not any(kind == "straddle" for kind, _, _ in posts(hand))


def test_finer_point_6_one_overblind_per_hand_the_first_from_the_buttons_left(
    overblind_table, published
):
    players = seated(overblind_table, 3)
    # Button seat 1: seat 2 (the small blind) comes before seat 3 from the button's left.
    ask(overblind_table, players[2], OVERBLIND)
    ask(overblind_table, players[1], OVERBLIND)
    hand = deal(overblind_table)
    assert ("overblind", 2, 400) in posts(hand)
    assert not any(kind == "small_blind" for kind, _, _ in posts(hand))  # it replaces it
    started = HandEvent.objects.get(hand=hand, type="hand_started").data
    assert started["overblind_seat"] == 2 and started["small_bet"] == 400
    [[honoured]] = private_notes(published, players[1], "blind_requests")
    assert honoured["posted"] is True and "limits of this hand are doubled" in honoured["message"]
    [[refused]] = private_notes(published, players[2], "blind_requests")
    assert refused["posted"] is False
    assert "one overblind per hand, and seat 2 asked too" in refused["message"]
    assert not Seat.objects.filter(table=overblind_table, wants_overblind=True).exists()


def test_the_snapshot_says_which_options_are_open_to_the_viewer(straddle_table):
    players = seated(straddle_table, 4)
    ask(straddle_table, players[3])
    straddle_table.refresh_from_db()
    mine = table_snapshot(table=straddle_table, user=players[3])["you"]["blind_options"]
    assert mine == {"straddle": {"open": True, "asked": True, "amount": 400, "reason": None}}
    other = table_snapshot(table=straddle_table, user=players[0])["you"]["blind_options"]
    assert other["straddle"]["open"] is False and "seat 4" in other["straddle"]["reason"]
    assert "overblind" not in other


def test_a_table_without_the_options_shows_none(table):
    players = seated(table, 3)
    assert table_snapshot(table=table, user=players[0])["you"]["blind_options"] is None


def test_a_request_made_during_a_hand_is_for_the_next_one(straddle_table, published):
    players = seated(straddle_table, 4)
    deal(straddle_table)
    # Hand 1: button 1. Hand 2 will have button 2, blinds 3 and 4: seat 1 straddles.
    with pytest.raises(BlindOptionSeat, match="seat 1 in the next hand"):
        ask(straddle_table, players[3])
    ask(straddle_table, players[0])
    play_passively(straddle_table)
    hand = deal(straddle_table)
    started = HandEvent.objects.get(hand=hand, type="hand_started").data
    assert started["straddle_seat"] == 1


def kill_won(*, kills_after_the_deal: str = "full"):
    """A heads-up fixed-limit table with full kills (and overblinds) whose first hand is won
    by a fold, which wins the kill; `kills_after_the_deal`: the kill setting an admin saves
    while that hand is played. Returns the table (fresh) and its players."""
    stake = StakeLevelFactory(
        structure=Structure.FIXED_LIMIT,
        allow_overblind=True,
        small_bet=200,
        big_bet=400,
        kill="full",
        kill_min_pot=0,
    )
    table = TableFactory(stake_level=stake, seats=6, pause_between_hands_ms=0)
    players = seated(table, 2)
    deal(table)
    hand, state = current(table)
    stake.kill = kills_after_the_deal
    stake.save(update_fields=["kill"])
    # Whoever acts first folds: the other scoops the pot and wins the kill.
    actor = Seat.objects.get(table=table, number=state.actor).player
    play.hand_act(table_id=table.id, user=actor, kind="fold")
    hand.refresh_from_db()
    assert HandState.from_dict(hand.state).result.next_kill is not None
    table.refresh_from_db()
    return table, players


def overblind_open_told(published, table, players) -> list[bool]:
    """Whether each player was told, as the hand was settled, that the next hand's
    overblind is open (their snapshot saying the same)."""
    told = [private_notes(published, user, "blind_options")[-1] for user in players]
    for user, options in zip(players, told, strict=True):
        assert options == table_snapshot(table=table, user=user)["you"]["blind_options"]
    return [options["overblind"]["open"] for options in told]


def test_the_options_told_as_a_hand_is_settled_know_the_kill_it_just_won(published):
    """Finding: settling told each player their options for the next hand from the last
    finished hand in the database, which was the one before (the settled hand is saved at
    the end of the command): a kill just won was missed, the overblind shown open for a
    kill hand, and the player's snapshot said otherwise."""
    table, players = kill_won()
    assert overblind_open_told(published, table, players) == [False, False]


def test_a_kill_won_before_the_admin_turned_kills_off_is_no_kill_hand(published):
    """RULES §7: a kill is a setting of the table. The engine ignores the last hand's kill
    once the table plays none; the options told for the next hand (and the snapshot) must
    say the same, not show a kill hand that is dealt as an ordinary one."""
    table, players = kill_won(kills_after_the_deal="none")
    assert overblind_open_told(published, table, players) == [True, True]
    following = deal(table)
    assert HandEvent.objects.get(hand=following, type="hand_started").data["kill"] is None
