"""No ratholing across the tables of a stake level (RULES §4; issue 46, finding 6).

Only the latest departure from a stake level used to count: a player seated at two of its
tables who left the one with a big stack and then the one with a small stack sat down
again bringing the small one. Every departure within the window is now owed until a sit
honours it, one sit one departure (the rule: `tables.selectors.rathole_departure`), and
the range a player is shown (the snapshot's `buy_in`, what the buy-in dialog offers) is
the one the sit enforces.
"""

import threading

import pytest
from django.db import connection, transaction

from cashier.models import AccountKind, LedgerAccount
from tables.exceptions import BuyInOutOfRange
from tables.models import Departure, HandStatus, StakeLevel, Table
from tables.selectors import table_snapshot
from tables.services import play, seating
from tests.conftest import wait_for
from tests.kit import TableFactory, current, deal, funded_player, key


def tables_of(stake: StakeLevel, count: int) -> list[Table]:
    return [TableFactory(stake_level=stake, seats=6) for _ in range(count)]


def sit(table: Table, user, buy_in: int, number: int = 1):
    return seating.seat_take(
        table_id=table.id, user=user, seat_number=number, buy_in=buy_in, idempotency_key=key()
    )


def leave(table: Table, user) -> None:
    assert seating.seat_leave(table_id=table.id, user=user) is True


def left_two_tables(stake: StakeLevel, more: int):
    """A player who sat at two tables of the stake level with $180 and $90 and left
    them, in that order; and `more` other tables of it."""
    a, b, *others = tables_of(stake, 2 + more)
    player = funded_player(200_000)
    sit(a, player, 18_000)
    sit(b, player, 9_000)
    leave(a, player)
    leave(b, player)
    return player, others


def shown_minimum(table: Table, user) -> int:
    """The smallest buy-in the player is offered at the table (the buy-in dialog's)."""
    table = Table.objects.select_related("stake_level").get(pk=table.pk)
    return table_snapshot(table=table, user=user)["buy_in"]["min"]


def sits_with_no_less_than(table: Table, user, minimum: int) -> None:
    """The minimum shown is `minimum`, a cent less is refused, and `minimum` is taken."""
    assert shown_minimum(table, user) == minimum
    with pytest.raises(BuyInOutOfRange):
        sit(table, user, minimum - 1)
    assert sit(table, user, minimum).stack == minimum


@pytest.mark.django_db
def test_rules_4_every_departure_of_the_stake_level_is_owed_until_a_sit_honours_it(stake):
    """The finding: seated at A with $180 and at B with $90, leave A, then B, sit down
    again: the minimum was $90 (B's, the latest). Each return honours one departure,
    the largest owed: $180 first, then $90, then nothing."""
    player, (c, d, e) = left_two_tables(stake, 3)

    sits_with_no_less_than(c, player, 18_000)
    sits_with_no_less_than(d, player, 9_000)
    assert shown_minimum(e, player) == stake.buy_in_min
    honoured = dict(Departure.objects.filter(player=player).values_list("stack", "honoured_by"))
    assert honoured[18_000] != honoured[9_000]  # one sit each


@pytest.mark.django_db
def test_rules_4_a_departure_honoured_by_a_sit_is_owed_no_more(stake):
    """Left A with $180, sat at C with $180, lost a blind at C and left it: the next sit
    owes C's stack, less than A's."""
    a, c, d = tables_of(stake, 3)
    player, opponent = funded_player(), funded_player()
    sit(a, player, 18_000)
    leave(a, player)
    sits_with_no_less_than(c, player, 18_000)

    sit(c, opponent, 10_000, number=2)
    deal(c)
    hand, state = current(c)
    if state.actor != 1:  # the opponent first: they raise, the player folds to it
        play.hand_act(table_id=c.id, user=opponent, kind="bet_raise", amount=600)
    # The player leaves on their turn: they fold, and go at the hand's end.
    assert seating.seat_leave(table_id=c.id, user=player) is False
    hand.refresh_from_db()
    assert hand.status == HandStatus.FINISHED
    left_with = Departure.objects.filter(player=player).latest("id").stack
    assert left_with < 18_000

    sits_with_no_less_than(d, player, left_with)


@pytest.mark.django_db
def test_rules_4_a_sit_capped_at_the_maximum_buy_in_honours_the_departure_in_full(stake):
    a, c, d = tables_of(stake, 3)
    player = funded_player()
    sit(a, player, 18_000)
    leave(a, player)
    # The maximum comes down below what the player left with: the cap applies.
    StakeLevel.objects.filter(pk=stake.pk).update(buy_in_max=10_000)

    sits_with_no_less_than(c, player, 10_000)
    assert shown_minimum(d, player) == stake.buy_in_min


@pytest.mark.django_db
def test_rules_4_a_player_seated_at_two_tables_of_the_stake_at_once(stake):
    """Seated at A and at B; leaving A owes A's stack to the next sit, made while still at
    B; leaving B then owes B's alone. B's own sit, made before A was left, honoured
    nothing of A's; and a sit with nothing owed (B's) honoured nothing."""
    a, b, c, d, e = tables_of(stake, 5)
    player = funded_player(200_000)
    sit(a, player, 18_000)
    sit(b, player, 6_000)
    leave(a, player)

    sits_with_no_less_than(c, player, 18_000)  # still seated at B
    leave(b, player)
    sits_with_no_less_than(d, player, 6_000)
    assert shown_minimum(e, player) == stake.buy_in_min


@pytest.mark.django_db
def test_rules_4_departures_outside_the_window_are_not_owed(stake):
    from datetime import timedelta

    from django.utils import timezone

    player, (c,) = left_two_tables(stake, 1)
    # A's departure falls out of the window (finer point 15: a second past its end).
    past = timezone.now() - timedelta(minutes=stake.rathole_minutes, seconds=1)
    Departure.objects.filter(player=player, stack=18_000).update(left_at=past)
    sits_with_no_less_than(c, player, 9_000)


def lock_waiters() -> int:
    with connection.cursor() as cursor:
        # Inside a transaction the statistics views keep their first snapshot otherwise.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_rules_4_two_sits_at_once_honour_two_departures_not_one(stake, settings):
    """Owed $180 (A) and $90 (B), the player sits at C with $180 and at D with $90 at
    the same moment. C's sit holds A's departure until it commits; D's, waiting for it,
    then finds B's the one owed. Without the lock D would have read A's as owed still
    and refused $90 (or both would have honoured A's, leaving B's owed)."""
    player, (c, d, e) = left_two_tables(stake, 3)
    wallet = LedgerAccount.objects.get(kind=AccountKind.WALLET, user=player)
    # The sits wait for as long as the test holds them (not refused busy meanwhile).
    settings.TABLE_LOCK_TIMEOUT_MS = 120_000
    results: dict[str, object] = {}

    def sit_in_thread(name: str, table: Table, buy_in: int) -> None:
        try:
            results[name] = sit(table, player, buy_in)
        except Exception as exc:
            results[name] = exc
        finally:
            connection.close()

    threads = []
    # The wallet held here: C's sit, with A's departure locked, waits for it at its debit.
    with transaction.atomic():
        LedgerAccount.objects.select_for_update().get(pk=wallet.pk)
        threads.append(threading.Thread(target=sit_in_thread, args=("c", c, 18_000)))
        threads[-1].start()
        wait_for(lambda: lock_waiters() == 1, what="C's sit waits for the wallet")
        threads.append(threading.Thread(target=sit_in_thread, args=("d", d, 9_000)))
        threads[-1].start()
        wait_for(
            lambda: lock_waiters() == 2 or not threads[-1].is_alive(),
            what="D's sit waits for A's departure (or is answered)",
        )
    for thread in threads:
        thread.join(timeout=60)
    assert not isinstance(results["c"], Exception), results["c"]
    assert not isinstance(results["d"], Exception), results["d"]
    assert Departure.objects.filter(player=player, honoured_by__isnull=True).count() == 0
    assert shown_minimum(e, player) == stake.buy_in_min
