"""The timer loop's pass (tables/timers.py), one at a time with a chosen `now`: turns time
out and hands are dealt from the deadlines in the database alone, two passes racing on
one turn act once, and only one loop leads. (A failing table does not stop the others:
tests/tables/test_table_isolation.py; the loop as a process: test_timeouts.py and
tests/foundation/test_process_kills.py.)"""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from tables.models import Hand, HandEvent, HandStatus, Table
from tables.timers import LEADER_SESSION, Leadership, timers_run_due, timers_workers
from tests.conftest import wait_for
from tests.kit import StakeLevelFactory, TableFactory, current, deal, seat_players

LONG_AGO = "2000-01-01T00:00Z"


def an_hour_from_now():
    return timezone.now() + timedelta(hours=1)


def quiet_table(**fields) -> Table:
    """A table whose next deal is an hour away: only the test makes anything due."""
    return TableFactory(
        stake_level=StakeLevelFactory(), seats=6, next_hand_at=an_hour_from_now(), **fields
    )


def timeouts_of(hand: Hand) -> int:
    return HandEvent.objects.filter(hand=hand, type="timed_out").count()


@pytest.mark.django_db
def test_a_turn_times_out_at_its_deadline_when_only_the_loop_runs():
    table = quiet_table(action_seconds=0, time_bank_seconds=0)
    seat_players(table, 2)
    hand = deal(table)
    hand.refresh_from_db()
    deadline, turn = hand.turn_deadline, hand.turn_version
    # Just before the deadline: nothing runs, and the pass says when to wake.
    early = timers_run_due(now=deadline - timedelta(microseconds=1))
    assert (early.timeouts, early.deals, early.failed) == (0, 0, 0)
    assert early.next_due == deadline
    assert timeouts_of(hand) == 0
    # At it: the turn times out, and the hand goes on to the next turn.
    due = timers_run_due(now=timezone.now())
    assert (due.timeouts, due.failed) == (1, 0)
    assert timeouts_of(hand) == 1
    hand.refresh_from_db()
    assert hand.status == HandStatus.FINISHED or hand.turn_version == turn + 1


@pytest.mark.django_db
def test_a_turn_far_away_is_not_run_nor_waited_for():
    table = quiet_table(action_seconds=60)
    seat_players(table, 2)
    deal(table)
    result = timers_run_due(now=timezone.now())
    # Beyond the horizon: the loop sleeps its usual while and looks again.
    assert (result.timeouts, result.next_due) == (0, None)
    soon = timers_run_due(now=timezone.now(), horizon=timedelta(minutes=2))
    assert soon.timeouts == 0 and soon.next_due is not None


@pytest.mark.django_db
def test_a_hand_start_due_is_dealt_and_a_deal_that_cannot_be_made_is_due_no_more():
    table = quiet_table(pause_between_hands_ms=0)
    seat_players(table, 2)
    lonely = quiet_table()
    seat_players(lonely, 1)
    assert timers_run_due(now=timezone.now()).deals == 0  # an hour away
    Table.objects.filter(pk__in=[table.pk, lonely.pk]).update(next_hand_at=timezone.now())
    result = timers_run_due(now=timezone.now())
    assert (result.deals, result.failed) == (1, 0)
    assert Hand.objects.filter(table=table, status=HandStatus.IN_PROGRESS).exists()
    # Dealt: due no more. One player cannot be dealt a hand: not tried on every pass.
    assert Table.objects.get(pk=table.pk).next_hand_at is None
    assert Table.objects.get(pk=lonely.pk).next_hand_at is None
    assert not Hand.objects.filter(table=lonely).exists()


@pytest.mark.django_db
def test_a_paused_table_plays_out_its_hand_but_is_not_dealt():
    table = quiet_table(action_seconds=60)
    seat_players(table, 2)
    deal(table)
    hand, _state = current(table)
    Table.objects.filter(pk=table.pk).update(status="paused", next_hand_at=timezone.now())
    Hand.objects.filter(pk=hand.pk).update(turn_deadline=LONG_AGO)
    result = timers_run_due(now=timezone.now())
    assert (result.timeouts, result.deals) == (1, 0)
    # A table paused by failures is the admin's: not even its turns are run.
    Table.objects.filter(pk=table.pk).update(paused_reason="broken")
    Hand.objects.filter(pk=hand.pk).update(turn_deadline=LONG_AGO)
    assert timers_run_due(now=timezone.now()).timeouts == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("timers_stopped")
def test_two_passes_racing_on_the_same_turn_act_once():
    table = quiet_table(action_seconds=60)
    seat_players(table, 3)
    deal(table)
    hand, _state = current(table)
    Hand.objects.filter(pk=hand.pk).update(turn_deadline=LONG_AGO)
    now = timezone.now()
    start = threading.Barrier(2)
    results = []

    def one_pass() -> None:
        try:
            start.wait()
            results.append(timers_run_due(now=now))
        finally:
            connection.close()

    threads = [threading.Thread(target=one_pass) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.timeouts for r in results) == [0, 1]
    assert [r.failed for r in results] == [0, 0]
    assert timeouts_of(hand) == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("timers_stopped")
def test_a_pass_serves_tables_side_by_side_on_its_workers():
    tables = [quiet_table(action_seconds=60) for _ in range(3)]
    hands = []
    for table in tables:
        seat_players(table, 2)
        hands.append(deal(table))
    Hand.objects.filter(pk__in=[h.pk for h in hands]).update(turn_deadline=LONG_AGO)
    with timers_workers(2) as workers:
        result = timers_run_due(now=timezone.now(), workers=workers)
    assert (result.timeouts, result.failed) == (3, 0)
    assert [timeouts_of(hand) for hand in hands] == [1, 1, 1]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("timers_stopped")
def test_only_one_loop_leads_until_it_goes():
    first, second = Leadership(), Leadership()
    try:
        assert first.holds()
        assert first.holds()  # re-entrant: the leader keeps leading
        assert not second.holds()
        first.release()  # its session ends (as when its process dies): the lock with it
        # (once the server has ended that session: a moment after the client closed it)
        wait_for(second.holds, timeout=5, what="the lock is free")
        assert not first.holds()
    finally:
        first.release()
        second.release()
        # The test database is dropped after the last test: wait for the server to end
        # the sessions closed.
        wait_for(lambda: not leader_sessions(), timeout=10, what="the sessions end")


def leader_sessions() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            # This database's only: a room running on the same server has its own leader.
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE application_name = %s AND datname = current_database()",
            [LEADER_SESSION],
        )
        return cursor.fetchone()[0]
