"""Auto top-up (tables/services/top_up.py) and posting a big blind to come in now
(RULES §4: top-ups between hands only, never above the maximum buy-in)."""

import pytest

from cashier.selectors import wallet_balance
from tables.engine.state import HandState
from tables.exceptions import TableError
from tables.models import (
    AutoTopUp,
    HandEvent,
    HandStatus,
    PlayerSettings,
    Seat,
    SeatStatus,
    Table,
)
from tables.services import play, seating
from tables.services.dealing import deal_plan
from tables.services.top_up import auto_top_up_set
from tests.concurrency import run_together
from tests.kit import (
    StakeLevelFactory,
    TableFactory,
    current,
    deal,
    funded_player,
    key,
    seat_players,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def published(monkeypatch):
    import tables.services.command as command

    sent: list = []
    monkeypatch.setattr(
        command, "publish_on_commit", lambda *, table_id, messages: sent.extend(messages)
    )
    return sent


def notes(published, user) -> list[dict]:
    return [
        m.private[user.id]["auto_top_up"]
        for m in published
        if "auto_top_up" in m.private.get(user.id, {})
    ]


def stack(table, user) -> int:
    return Seat.objects.get(table=table, player=user).stack


def play_out(table) -> None:
    """Check or call until the hand is over."""
    while True:
        hand, state = current(table)
        seat = Seat.objects.get(table=table, number=state.actor)
        kind = "check" if state.legal_actions().can_check else "call"
        play.hand_act(table_id=table.id, user=seat.player, kind=kind, turn=hand.turn_version)
        hand.refresh_from_db()
        if hand.status == HandStatus.FINISHED:
            return


def test_max_brings_the_stack_back_to_the_maximum_after_the_hand(table, published):
    ann, bob = seat_players(table, 2, buy_in=10_000)
    auto_top_up_set(table_id=table.id, user=ann, mode=AutoTopUp.MAX)
    # Given between hands: it runs at once, from the wallet.
    maximum = table.stake_level.buy_in_max
    assert stack(table, ann) == maximum
    assert notes(published, ann) == [{"added": maximum - 10_000, "due": maximum - 10_000}]
    hand = deal(table)
    play_out(table)
    hand.refresh_from_db()
    state = HandState.from_dict(hand.state)
    settled = state.stacks[state.index_of(Seat.objects.get(player=ann).number)]
    # Back to the maximum if the hand cost chips (then it ran again); above it if it won.
    assert stack(table, ann) == max(settled, maximum)
    ran_again = (
        [{"added": maximum - settled, "due": maximum - settled}] if settled < maximum else []
    )
    assert notes(published, ann)[1:] == ran_again
    assert notes(published, bob) == []


def test_below_tops_up_only_under_that_many_big_blinds(table):
    big = table.stake_level.big_blind
    (ann,) = seat_players(table, 1, buy_in=10_000)
    auto_top_up_set(table_id=table.id, user=ann, mode=AutoTopUp.BELOW, big_blinds=10_000 // big)
    assert stack(table, ann) == 10_000  # not below: nothing
    auto_top_up_set(table_id=table.id, user=ann, mode=AutoTopUp.BELOW, big_blinds=10_000 // big + 1)
    assert stack(table, ann) == table.stake_level.buy_in_max


def test_a_short_wallet_pays_what_it_holds_and_an_empty_one_nothing(table, published):
    ann = funded_player(amount=10_500)
    seating.seat_take(
        table_id=table.id, user=ann, seat_number=1, buy_in=10_000, idempotency_key=key()
    )
    auto_top_up_set(table_id=table.id, user=ann, mode=AutoTopUp.MAX)
    assert stack(table, ann) == 10_500 and wallet_balance(user=ann) == 0
    due = table.stake_level.buy_in_max - 10_000
    assert notes(published, ann) == [{"added": 500, "due": due}]
    auto_top_up_set(table_id=table.id, user=ann, mode=AutoTopUp.MAX)
    assert notes(published, ann)[-1] == {"added": 0, "due": due - 500}


def test_during_a_hand_the_order_waits_for_its_end(table):
    ann, _ = seat_players(table, 2, buy_in=10_000)
    deal(table)
    auto_top_up_set(table_id=table.id, user=ann, mode=AutoTopUp.MAX)
    assert stack(table, ann) == 10_000  # dealt in: not now
    play_out(table)
    assert stack(table, ann) >= table.stake_level.buy_in_max


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"mode": "always"}, "malformed"),
        ({"mode": "below"}, "bad_amount"),
        ({"mode": "below", "big_blinds": 0}, "bad_amount"),
    ],
)
def test_a_bad_order_is_refused_and_changes_nothing(table, fields, code):
    (ann,) = seat_players(table, 1)
    with pytest.raises(TableError) as refused:
        auto_top_up_set(table_id=table.id, user=ann, **fields)
    assert refused.value.code == code
    assert stack(table, ann) == 10_000


def test_a_waiting_player_posts_a_big_blind_to_come_in_now(table):
    seat_players(table, 4)
    deal(table)
    play_out(table)
    late = funded_player()
    seating.seat_take(
        table_id=table.id, user=late, seat_number=5, buy_in=10_000, idempotency_key=key()
    )
    seat = Seat.objects.get(player=late)
    # Hand two: button 2, blinds 3 and 4; seat 5 waits for the big blind unless it posts.
    plan = deal_plan(seats=list(Seat.objects.filter(table=table)), previous_button=1)
    assert 5 not in {entry.seat for entry in plan.entries}
    assert seat.status == SeatStatus.WAITING and not seat.post_big_blind
    seating.seat_sit_in(table_id=table.id, user=late, post_big_blind=True)
    hand = deal(table)
    posted = HandEvent.objects.filter(hand=hand, type="posted").values_list("data", flat=True)
    assert {"seat": 5, "kind": "newcomer_big_blind"}.items() <= next(
        d for d in posted if d["seat"] == 5
    ).items()


@pytest.mark.django_db(transaction=True)
def test_a_first_order_given_at_two_tables_at_once_is_taken_at_both():
    """Finding: the settings row was read, then saved as new; two first orders at once
    (two tables, so two table locks) both inserted it, and the loser's IntegrityError
    counted as its table's failure. Several players, so that the race is met."""
    tables = [TableFactory(stake_level=StakeLevelFactory()) for _ in range(2)]
    for _ in range(5):
        user = funded_player()
        results = run_together(
            [
                lambda t=t, user=user: auto_top_up_set(table_id=t.id, user=user, mode=AutoTopUp.MAX)
                for t in tables
            ]
        )
        assert all(isinstance(r, PlayerSettings) for r in results), results
    assert {t.failure_count for t in Table.objects.all()} == {0}


def test_an_account_that_may_not_play_is_not_topped_up(table, published):
    """Finding: `top_up` refuses a player made staff while seated (`cannot_play`), but
    their standing order still moved their wallet's money to the table."""
    (ann,) = seat_players(table, 1, buy_in=10_000)
    type(ann).objects.filter(pk=ann.pk).update(is_staff=True)
    ann.refresh_from_db()
    before = wallet_balance(user=ann)
    auto_top_up_set(table_id=table.id, user=ann, mode=AutoTopUp.MAX)
    assert stack(table, ann) == 10_000
    assert wallet_balance(user=ann) == before
    assert notes(published, ann) == []
