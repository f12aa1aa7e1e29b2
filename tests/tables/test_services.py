"""Table commands on the real database: seating, dealing, acting, settling, leaving."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cashier.models import AccountKind, LedgerAccount
from tables.engine.state import HandState
from tables.exceptions import (
    BuyInOutOfRange,
    HandInProgress,
    IllegalTableAction,
    NotSeated,
    NotYourTurn,
    SeatUnavailable,
    StaleCommand,
    TableError,
)
from tables.ledger import table_account_get
from tables.models import Departure, Hand, HandEvent, HandStatus, Seat, SeatStatus, Table
from tables.services import play, seating
from tests.kit import current, deal, funded_player, key

pytestmark = pytest.mark.django_db


def table_balance(table) -> int:
    return table_account_get(table=table).balance


def wallet_balance(user) -> int:
    return LedgerAccount.objects.get(kind=AccountKind.WALLET, user=user).balance


def sit(table, user, number, buy_in=10_000, **kw):
    return seating.seat_take(
        table_id=table.id, user=user, seat_number=number, buy_in=buy_in, idempotency_key=key(), **kw
    )


def users_at(table):
    return {s.number: s.player for s in Seat.objects.filter(table=table).select_related("player")}


def play_passively(table) -> Hand:
    """Call or check until the hand ends; returns the finished hand."""
    hand, state = current(table)
    players = users_at(table)
    while not state.over:
        legal = state.legal_actions()
        kind = "check" if legal.can_check else "call"
        play.hand_act(table_id=table.id, user=players[state.actor], kind=kind)
        hand.refresh_from_db()
        state = HandState.from_dict(hand.state)
    return hand


def heads_up(table):
    """Alice in seat 1 and Bob in seat 2, with the first hand dealt."""
    alice, bob = funded_player(), funded_player()
    sit(table, alice, 1)
    sit(table, bob, 2)
    deal(table)
    return alice, bob


def assert_table_account_matches_seats(table):
    total = sum(Seat.objects.filter(table=table).values_list("stack", flat=True))
    assert table_balance(table) == total


def test_sitting_down_moves_the_buy_in_from_the_wallet_to_the_table(table):
    alice = funded_player()
    seat = sit(table, alice, 3, buy_in=12_000)
    assert seat.status == SeatStatus.WAITING
    assert wallet_balance(alice) == 100_000 - 12_000
    assert table_balance(table) == 12_000


def test_the_table_names_its_ledger_account_and_a_raked_hand_settles_in_three_queries(table):
    """The first buy-in opens the account and the table row names it; from then on a
    hand's rake is posted without looking the table's or the house's account up (the
    house's is remembered from the first raked hand), and the auto top-up orders come
    with the lock: the lock's query, the rake's posting (one statement), and the
    command's writes (a test's transaction adds its savepoint)."""
    assert table.ledger_account_id is None
    heads_up(table)
    table.refresh_from_db()
    assert table.ledger_account_id == table_account_get(table=table).pk
    for _ in range(2):
        hand, state = current(table)
        players = users_at(table)
        while not state.over:
            kind = "check" if state.legal_actions().can_check else "call"
            with CaptureQueriesContext(connection) as queries:
                play.hand_act(table_id=table.id, user=players[state.actor], kind=kind)
            hand.refresh_from_db()
            state = HandState.from_dict(hand.state)
        assert hand.rake > 0
        assert_table_account_matches_seats(table)
        deal(table)
    statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(statements) == 3, "\n".join(sql[:150] for sql in statements)


@pytest.mark.parametrize("buy_in", [3_999, 20_001, 0, -5])
def test_a_buy_in_outside_the_stake_levels_range_is_refused_and_moves_nothing(table, buy_in):
    alice = funded_player()
    with pytest.raises(BuyInOutOfRange, match=r"from \$40\.00 to \$200\.00"):
        sit(table, alice, 1, buy_in=buy_in)
    assert wallet_balance(alice) == 100_000
    assert not Seat.objects.filter(table=table).exists()


def test_a_buy_in_above_the_wallet_is_refused_with_the_cashiers_reason(table):
    poor = funded_player(amount=5_000)
    with pytest.raises(TableError) as info:
        sit(table, poor, 1, buy_in=6_000)
    assert info.value.code == "insufficient_funds"
    assert not Seat.objects.filter(table=table).exists()


def test_a_taken_seat_and_a_second_seat_are_refused(table):
    alice, bob = funded_player(), funded_player()
    sit(table, alice, 1)
    with pytest.raises(SeatUnavailable, match="taken"):
        sit(table, bob, 1)
    with pytest.raises(SeatUnavailable, match="already seated"):
        sit(table, alice, 2)
    with pytest.raises(SeatUnavailable, match="numbered 1 to 6"):
        sit(table, bob, 7)


def test_two_players_are_dealt_a_hand_with_a_commitment_and_blinds(table):
    alice, bob = funded_player(), funded_player()
    sit(table, alice, 2)
    sit(table, bob, 5)
    hand = deal(table)
    assert hand is not None and hand.number == 1
    state = HandState.from_dict(hand.state)
    # The first hand's button goes to the first player seated; heads-up it posts the SB.
    assert hand.button == 2
    assert state.committed == [100, 200]
    assert len(hand.deck_commitment) == 64 and len(hand.salt) == 64
    types = list(HandEvent.objects.filter(hand=hand).values_list("type", flat=True))
    assert types[:3] == ["hand_started", "posted", "posted"]
    assert types.count("hole_cards") == 2
    assert hand.turn_version == 1 and hand.turn_deadline is not None
    assert Seat.objects.get(player=alice).status == SeatStatus.ACTIVE


def test_a_full_hand_settles_stacks_and_keeps_every_chip(table):
    players = [funded_player() for _ in range(3)]
    for number, user in zip((1, 3, 5), players, strict=True):
        sit(table, user, number)
    deal(table)
    hand = play_passively(table)
    assert hand.status == HandStatus.FINISHED
    state = HandState.from_dict(hand.state)
    stacks = dict(Seat.objects.filter(table=table).values_list("number", "stack"))
    assert stacks == dict(zip(state.seats, state.stacks, strict=True))
    assert sum(stacks.values()) + hand.rake == 30_000
    house = LedgerAccount.objects.get(kind=AccountKind.HOUSE).balance if hand.rake else 0
    assert house == hand.rake
    assert_table_account_matches_seats(table)
    call_command("audit_ledger")


def test_acting_out_of_turn_is_refused_and_changes_nothing(table):
    alice, bob = heads_up(table)
    hand, state = current(table)
    waiting = alice if users_at(table)[state.actor] == bob else bob
    with pytest.raises(NotYourTurn):
        play.hand_act(table_id=table.id, user=waiting, kind="fold")
    hand.refresh_from_db()
    assert HandState.from_dict(hand.state) == state


def test_an_illegal_raise_is_refused_with_the_engines_code(table):
    heads_up(table)
    hand, state = current(table)
    actor = users_at(table)[state.actor]
    with pytest.raises(IllegalTableAction) as info:
        play.hand_act(table_id=table.id, user=actor, kind="bet_raise", amount=250)
    assert info.value.code == "below_min_raise"
    with pytest.raises(IllegalTableAction) as info:
        play.hand_act(table_id=table.id, user=actor, kind="shove")
    assert info.value.code == "no_such_action"
    hand.refresh_from_db()
    assert HandState.from_dict(hand.state) == state


def test_an_action_for_an_earlier_turn_is_stale(table):
    heads_up(table)
    _, state = current(table)
    with pytest.raises(StaleCommand):
        play.hand_act(table_id=table.id, user=users_at(table)[state.actor], kind="call", turn=0)


def test_a_stranger_cannot_act(table):
    alice, bob, carol = funded_player(), funded_player(), funded_player()
    sit(table, alice, 1)
    sit(table, bob, 2)
    deal(table)
    with pytest.raises(NotSeated):
        play.hand_act(table_id=table.id, user=carol, kind="fold")


def test_a_top_up_during_the_hand_is_refused_and_allowed_after_it(table):
    alice, _ = heads_up(table)
    with pytest.raises(HandInProgress, match="between hands"):
        seating.seat_top_up(table_id=table.id, user=alice, amount=1_000, idempotency_key=key())
    play_passively(table)
    stack = Seat.objects.get(player=alice).stack
    with pytest.raises(BuyInOutOfRange):
        seating.seat_top_up(
            table_id=table.id, user=alice, amount=20_001 - stack, idempotency_key=key()
        )
    seating.seat_top_up(table_id=table.id, user=alice, amount=20_000 - stack, idempotency_key=key())
    assert Seat.objects.get(player=alice).stack == 20_000
    assert_table_account_matches_seats(table)


def test_leaving_during_a_hand_folds_at_the_turn_and_cashes_out_at_the_end(table):
    alice, bob, carol = funded_player(), funded_player(), funded_player()
    sit(table, alice, 1)
    sit(table, bob, 2)
    sit(table, carol, 3)
    deal(table)
    hand, state = current(table)
    leaver = users_at(table)[state.actor]
    assert seating.seat_leave(table_id=table.id, user=leaver) is False
    hand.refresh_from_db()
    after = HandState.from_dict(hand.state)
    assert str(after.status[after.index_of(state.actor)]) == "folded"
    play_passively(table)
    assert not Seat.objects.filter(player=leaver).exists()
    departure = Departure.objects.get(player=leaver)
    assert wallet_balance(leaver) == 100_000 - 10_000 + departure.stack
    assert_table_account_matches_seats(table)
    call_command("audit_ledger")


def test_leaving_between_hands_returns_the_stack_at_once(table):
    alice = funded_player()
    sit(table, alice, 4, buy_in=15_000)
    assert seating.seat_leave(table_id=table.id, user=alice) is True
    assert wallet_balance(alice) == 100_000
    assert table_balance(table) == 0


def test_no_ratholing_a_returning_player_brings_the_stack_they_left_with(table, stake):
    alice = funded_player()
    sit(table, alice, 1, buy_in=18_000)
    seating.seat_leave(table_id=table.id, user=alice)
    with pytest.raises(BuyInOutOfRange, match=r"from \$180\.00 to \$200\.00"):
        sit(table, alice, 1, buy_in=4_000)
    sit(table, alice, 1, buy_in=18_000)


def test_a_timeout_checks_when_checking_is_free(table):
    heads_up(table)
    hand, state = current(table)
    # Preflop heads-up: the small blind calls, then the big blind could check.
    play.hand_act(table_id=table.id, user=users_at(table)[state.actor], kind="call")
    hand.refresh_from_db()
    Hand.objects.filter(pk=hand.pk).update(turn_deadline="2000-01-01T00:00Z")
    assert play.turn_timeout(table_id=table.id, hand_id=hand.id, turn=hand.turn_version)
    timed_out = HandEvent.objects.get(hand=hand, type="timed_out")
    assert timed_out.data["resolution"] == "check"


def test_a_timeout_for_a_turn_already_played_does_nothing(table):
    heads_up(table)
    hand, state = current(table)
    play.hand_act(table_id=table.id, user=users_at(table)[state.actor], kind="call")
    assert not play.turn_timeout(table_id=table.id, hand_id=hand.id, turn=1)
    assert not HandEvent.objects.filter(hand=hand, type="timed_out").exists()


def test_a_timeout_before_the_deadline_does_not_act(table):
    alice, bob = funded_player(), funded_player()
    sit(table, alice, 1)
    sit(table, bob, 2)
    hand = deal(table)
    assert not play.turn_timeout(table_id=table.id, hand_id=hand.id, turn=hand.turn_version)


def test_two_timeouts_in_a_row_sit_the_player_out_after_the_hand(table):
    alice, bob = funded_player(), funded_player()
    sit(table, alice, 1)
    sit(table, bob, 2)
    Seat.objects.filter(player=alice).update(consecutive_timeouts=1)
    deal(table)
    hand, state = current(table)
    while not state.over and users_at(table)[state.actor] != alice:
        play.hand_act(table_id=table.id, user=users_at(table)[state.actor], kind="call")
        hand, state = current(table)
    Hand.objects.filter(pk=hand.pk).update(turn_deadline="2000-01-01T00:00Z")
    play.turn_timeout(table_id=table.id, hand_id=hand.id, turn=hand.turn_version)
    if Hand.objects.filter(pk=hand.pk, status=HandStatus.IN_PROGRESS).exists():
        play_passively(table)
    assert Seat.objects.get(player=alice).status == SeatStatus.SITTING_OUT


def test_the_reconnect_bonus_is_granted_once_per_decision(table):
    alice, bob = funded_player(), funded_player()
    sit(table, alice, 1)
    sit(table, bob, 2)
    hand = deal(table)
    state = HandState.from_dict(hand.state)
    actor = users_at(table)[state.actor]
    other = bob if actor == alice else alice
    before = hand.turn_deadline
    for user in (other, actor):  # both dropped; only the actor's drop was on their turn
        play.seat_disconnected(table_id=table.id, user=user)
    assert not play.seat_reconnected(table_id=table.id, user=other)
    assert play.seat_reconnected(table_id=table.id, user=actor)
    play.seat_disconnected(table_id=table.id, user=actor)
    assert not play.seat_reconnected(table_id=table.id, user=actor)
    hand.refresh_from_db()
    assert (hand.turn_deadline - before).total_seconds() == table.reconnect_bonus_seconds


def test_a_newcomer_waits_for_the_big_blind_or_posts_one(table):
    a, b, c = funded_player(), funded_player(), funded_player()
    sit(table, a, 1)
    sit(table, b, 3)
    deal(table)
    play_passively(table)
    # Seat 5 arrives and waits: with the button on 3 next hand, the big blind is seat 1...
    sit(table, c, 5)
    hand = deal(table)
    state = HandState.from_dict(hand.state)
    dealt_c = 5 in state.seats
    big_blind_seat = state.seats[state.big_blind_index]
    assert dealt_c == (big_blind_seat == 5)
    play_passively(table)


def test_a_newcomer_who_posts_is_dealt_in_at_once_with_a_live_big_blind(table):
    a, b, c, d = funded_player(), funded_player(), funded_player(), funded_player()
    for number, user in ((1, a), (2, b), (3, c)):
        sit(table, user, number)
    deal(table)
    play_passively(table)
    sit(table, d, 6, post_big_blind=True)
    hand = deal(table)
    state = HandState.from_dict(hand.state)
    posts = HandEvent.objects.filter(hand=hand, type="posted")
    kinds = {e.data["seat"]: e.data["kind"] for e in posts}
    if 6 in state.seats and kinds.get(6) == "newcomer_big_blind":
        assert sum(1 for k in kinds.values() if "big_blind" in k) == 2
    else:  # seat 6 sits on the button or in the small blind this hand: it waits.
        assert 6 not in state.seats or kinds.get(6) == "big_blind"


def test_the_ledger_audit_checks_table_accounts_against_seats(table):
    from cashier.audit import ledger_audit

    alice, _ = heads_up(table)
    assert ledger_audit().ok
    # A stack changed behind the ledger's back is a discrepancy.
    Seat.objects.filter(player=alice).update(stack=9_999)
    messages = [str(d) for d in ledger_audit().discrepancies]
    assert any("ledger account 20000 != seated stacks 19999" in m for m in messages)
    assert any("seat 1 holds 9999, started with 10000" in m for m in messages)
    Seat.objects.filter(player=alice).update(stack=10_000)


def test_admin_explains_a_wrong_combination_of_stake_settings(admin_client, stake):
    data = {
        "name": "Kill on pot limit",
        "game": "omaha",
        "structure": "PL",
        "small_blind": 100,
        "big_blind": 200,
        "small_bet": 200,
        "big_bet": 400,
        "spread_min": 0,
        "spread_max": 0,
        "ante": 0,
        "buy_in_min": 2_000,
        "buy_in_max": 20_000,
        "rathole_minutes": 60,
        "rake_percent_bp": 500,
        "rake_cap_2": 100,
        "rake_cap_3_4": 200,
        "rake_cap_5_plus": 300,
        "kill": "full",
        "kill_min_pot": 0,
        "allin_protection_per_day": 0,
    }
    response = admin_client.post("/admin/tables/stakelevel/add/", data)
    assert response.status_code == 200
    assert b"Kill pots are played in fixed and spread limit only." in response.content
    data["kill"] = "none"
    response = admin_client.post("/admin/tables/stakelevel/add/", data)
    assert response.status_code == 302


def test_a_paused_table_finishes_the_hand_and_deals_no_more(table):
    from tables.models import TableStatus
    from tables.services.admin import table_status_set

    heads_up(table)
    table_status_set(table_id=table.id, status=TableStatus.PAUSED)
    hand = play_passively(table)
    assert hand.status == HandStatus.FINISHED
    assert deal(table) is None
    table_status_set(table_id=table.id, status=TableStatus.OPEN)
    assert deal(table) is not None


def test_the_snapshot_tells_a_returning_player_the_buy_in_they_must_bring(table):
    from tables.selectors import table_snapshot

    alice = funded_player()
    assert table_snapshot(table=table, user=alice)["buy_in"] == {"min": 4_000, "max": 20_000}
    sit(table, alice, 1, buy_in=18_000)
    assert table_snapshot(table=table, user=alice)["buy_in"] is None  # seated already
    seating.seat_leave(table_id=table.id, user=alice)
    assert table_snapshot(table=table, user=alice)["buy_in"] == {"min": 18_000, "max": 20_000}


def test_an_auditor_cannot_take_a_seat(table):
    from accounts.services import auditor_create

    auditor, _password, _token = auditor_create(username="watcher")
    with pytest.raises(TableError) as info:
        sit(table, auditor, 1)
    assert info.value.code == "cannot_play"


def test_the_daily_all_in_protection_limit_turns_protection_into_a_fold(table, stake):
    from tables.models import ProtectionUse

    stake.allin_protection_per_day = 1
    stake.save()
    players = [funded_player() for _ in range(3)]
    for number, user in zip((1, 2, 3), players, strict=True):
        sit(table, user, number)
    deal(table)
    hand, _ = current(table)
    users = users_at(table)
    # Seat 1 (button) folds; the small blind (seat 2), money in, would be protected...
    play.hand_act(table_id=table.id, user=users[1], kind="fold")
    hand.refresh_from_db()
    # ...but was already protected once in the last 24 hours (RULES §5, finer point 8).
    ProtectionUse.objects.create(player=users[2], hand=hand)
    Hand.objects.filter(pk=hand.pk).update(turn_deadline="2000-01-01T00:00Z")
    assert play.turn_timeout(table_id=table.id, hand_id=hand.id, turn=hand.turn_version)
    timed_out = HandEvent.objects.get(hand=hand, type="timed_out")
    assert (timed_out.data["seat"], timed_out.data["resolution"]) == (2, "fold")


def test_only_a_player_back_from_sitting_out_asks_for_a_hand_to_start(table):
    """ "I'm back" sent again and again by a player who is already in must not ask the
    timer loop for a deal each time; the first one back from sitting out does."""

    def deal_due() -> bool:
        return Table.objects.get(pk=table.pk).next_hand_at is not None

    a = funded_player()
    sit(table, a, 1)
    assert deal_due()  # sitting down asks for a deal
    Table.objects.filter(pk=table.pk).update(next_hand_at=None)  # as a try that dealt none
    for _ in range(5):
        seating.seat_sit_in(table_id=table.id, user=a)
    assert not deal_due()
    seating.seat_sit_out(table_id=table.id, user=a)
    seating.seat_sit_in(table_id=table.id, user=a)
    assert deal_due()


def test_a_player_back_from_sitting_out_waits_for_the_big_blind_like_a_newcomer(table):
    # Heads-up (1 and 2) with seat 3 coming back: the button passes seat 3 every other
    # hand, so finer point 16's wait applies from three players up, or 3 would never play.
    a, b, c = funded_player(), funded_player(), funded_player()
    for number, user in ((1, a), (2, b), (3, c)):
        sit(table, user, number)
    seating.seat_sit_out(table_id=table.id, user=c)
    hand = deal(table)
    assert 3 not in HandState.from_dict(hand.state).seats  # sitting out: not dealt in
    play_passively(table)
    seating.seat_sit_in(table_id=table.id, user=c)
    assert Seat.objects.get(player=c).status == SeatStatus.WAITING
    for _ in range(3):
        hand = deal(table)
        state = HandState.from_dict(hand.state)
        if 3 in state.seats:
            # Dealt in only when the big blind reaches seat 3.
            assert state.seats[state.big_blind_index] == 3
            break
        play_passively(table)
    else:
        raise AssertionError("the big blind never reached the returning player")


def test_rules_4_a_rathole_refusal_says_what_the_player_left_with_and_must_bring(table):
    alice = funded_player()
    sit(table, alice, 1, buy_in=18_000)
    seating.seat_leave(table_id=table.id, user=alice)
    with pytest.raises(BuyInOutOfRange) as refused:
        sit(table, alice, 2, buy_in=10_000)
    assert str(refused.value) == (
        "The buy-in must be from $180.00 to $200.00. You left this stake level with $180.00 "
        "within the last 60 minutes: you must bring at least $180.00 (no ratholing)."
    )
    assert sit(table, alice, 2, buy_in=18_000).stack == 18_000


def test_finer_point_15_the_rathole_window_is_inclusive_and_then_ends(table):
    from datetime import timedelta

    from django.utils import timezone

    alice = funded_player()
    sit(table, alice, 1, buy_in=18_000)
    seating.seat_leave(table_id=table.id, user=alice)
    departure = Departure.objects.get(player=alice)
    # Exactly rathole_minutes ago (a second's grace for the test's own run time): inside.
    edge = timezone.now() - timedelta(minutes=60) + timedelta(seconds=1)
    Departure.objects.filter(pk=departure.pk).update(left_at=edge)
    with pytest.raises(BuyInOutOfRange, match="no ratholing"):
        sit(table, alice, 2, buy_in=10_000)
    Departure.objects.filter(pk=departure.pk).update(left_at=edge - timedelta(seconds=2))
    assert sit(table, alice, 2, buy_in=4_000).stack == 4_000


def test_a_buy_in_out_of_range_with_no_rathole_names_only_the_range(table):
    with pytest.raises(BuyInOutOfRange) as refused:
        sit(table, funded_player(), 1, buy_in=100)
    assert str(refused.value) == "The buy-in must be from $40.00 to $200.00."


def test_finer_point_16_a_newcomer_in_the_seat_the_button_moves_to_waits_until_it_passes(table):
    """Issue #13: seats 1-5 play, the last button was seat 5, F sits at 6 choosing to post.
    The button moves to the next player dealt in; F, in the button seat, is not dealt in
    (RULES §3.1, finer point 16): the button goes to seat 1, and F posts on the next hand."""
    players = [funded_player() for _ in range(5)]
    for number, user in enumerate(players, start=1):
        sit(table, user, number)
    for _ in range(6):
        hand = deal(table)
        if hand.button == 5:
            break
        play_passively(table)
    else:
        raise AssertionError("the button never reached seat 5")
    play_passively(table)
    newcomer = funded_player()
    sit(table, newcomer, 6, post_big_blind=True)
    hand = deal(table)
    state = HandState.from_dict(hand.state)
    assert hand.button == 1
    assert 6 not in state.seats
    play_passively(table)
    hand = deal(table)
    state = HandState.from_dict(hand.state)
    assert hand.button == 2
    assert 6 in state.seats
    posted = {
        e.data["seat"]: e.data["kind"] for e in HandEvent.objects.filter(hand=hand, type="posted")
    }
    assert posted[6] == "newcomer_big_blind"


def test_a_paused_table_takes_no_buy_in_and_says_why(table):
    """Issue #16: a table that deals no hands takes nobody's chips; open again, it does."""
    from tables.exceptions import TableClosed
    from tables.models import TableStatus
    from tables.services.admin import table_status_set

    alice = funded_player()
    table_status_set(table_id=table.id, status=TableStatus.PAUSED)
    with pytest.raises(TableClosed, match="paused: no new players until it opens again"):
        sit(table, alice, 1)
    assert not Seat.objects.filter(table=table).exists()
    table_status_set(table_id=table.id, status=TableStatus.OPEN)
    assert sit(table, alice, 1).stack == 10_000
