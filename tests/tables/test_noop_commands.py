"""Commands that change nothing publish nothing, and most take no lock (issue #46,
finding 9).

`straddle` off when nothing was asked, `sit_in` while in, a reconnect with no drop
recorded (and the others below) each locked the table and broadcast to every viewer.
Now they answer as before, but leave the table's stream version (`event_seq`) where it
was and publish nothing; those a read before the lock can tell (`unchanged_before_lock`)
do not even wait for the table's lock: they answer while another session holds it. The
locked path checks again (the read before it is only a shortcut), and the commands that
do change something still lock, publish and bump the version.
"""

from collections.abc import Callable
from typing import Any

import pytest

from tables.exceptions import TableBusy
from tables.models import AutoTopUp, ChatMute, PlayerSettings, Seat, SeatStatus, Structure, Table
from tables.services import advance, blind_options, chat, play, seating, top_up
from tests.kit import (
    StakeLevelFactory,
    current,
    deal,
    funded_player,
    play_passively,
    table_with_players,
)
from tests.tables.test_table_isolation import row_held

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("timers_stopped")]


@pytest.fixture
def published(monkeypatch) -> list:
    """What the commands publish (after their commit), kept instead of sent."""
    import tables.services.command as command

    sent: list = []
    monkeypatch.setattr(
        command, "publish_on_commit", lambda *, table_id, messages: sent.extend(messages)
    )
    return sent


@pytest.fixture
def table() -> Table:
    """Three players, one hand played (all active), none in progress; straddles and
    overblinds allowed (fixed limit)."""
    stake = StakeLevelFactory(
        structure=Structure.FIXED_LIMIT,
        small_bet=200,
        big_bet=400,
        allow_straddle=True,
        allow_overblind=True,
    )
    table, _players = table_with_players(stake, 3)
    play_passively(table)
    return table


def seated(table: Table, number: int):
    return Seat.objects.get(table=table, number=number).player


def event_seq(table: Table) -> int:
    return Table.objects.get(pk=table.pk).event_seq


def nothing(table: Table) -> int:
    return 1


def waiting_for_the_big_blind(table: Table) -> int:
    Seat.objects.filter(table=table, number=1).update(status=SeatStatus.WAITING)
    return 1


def sitting_out(table: Table) -> int:
    Seat.objects.filter(table=table, number=1).update(status=SeatStatus.SITTING_OUT)
    return 1


def leaving_after_the_hand(table: Table) -> int:
    """A hand in progress, and a player dealt in (not on their turn) leaving after it."""
    deal(table)
    _hand, state = current(table)
    number = next(n for n in state.seats if n != state.actor)
    Seat.objects.filter(table=table, number=number).update(leave_after_hand=True)
    return number


# (name, how to bring the table to the state where the command changes nothing (the
# seat whose player sends it), the service's module and name, its other arguments) for
# every command that can be a no-op a read before the lock can tell.
NO_OPS_BEFORE_THE_LOCK: list[tuple[str, Callable[[Table], int], Any, str, dict[str, Any]]] = [
    ("straddle off, nothing asked", nothing, blind_options, "seat_blind_option_set",
     {"kind": blind_options.STRADDLE, "wanted": False}),
    ("overblind off, nothing asked", nothing, blind_options, "seat_blind_option_set",
     {"kind": blind_options.OVERBLIND, "wanted": False}),
    ("sit_in while playing", nothing, seating, "seat_sit_in", {}),
    ("sit_in while waiting for the big blind", waiting_for_the_big_blind, seating,
     "seat_sit_in", {}),
    ("sit_out while sitting out", sitting_out, seating, "seat_sit_out", {}),
    ("a reconnect with no drop recorded", nothing, play, "seat_reconnected", {}),
    ("advance cleared with nothing queued", nothing, advance, "seat_advance_set",
     {"kind": None}),
    ("leave again while leaving after the hand", leaving_after_the_hand, seating,
     "seat_leave", {}),
]  # fmt: skip
NO_OPS = pytest.mark.parametrize(
    ("prepare", "module", "service", "arguments"),
    [case[1:] for case in NO_OPS_BEFORE_THE_LOCK],
    ids=[case[0] for case in NO_OPS_BEFORE_THE_LOCK],
)


def table_seen(table: Table) -> tuple[int, list[dict]]:
    """The table's stream version and its seats, as a command could change them."""
    return event_seq(table), list(Seat.objects.filter(table=table).order_by("pk").values())


@NO_OPS
def test_a_command_that_changes_nothing_publishes_nothing_and_takes_no_lock(
    table, published, settings, prepare, module, service, arguments
):
    settings.TABLE_LOCK_TIMEOUT_MS = 200
    user = seated(table, prepare(table))
    published.clear()  # (what a deal to prepare it published)
    before = table_seen(table)
    with row_held(table):  # another session holds the table's lock all along
        getattr(module, service)(table_id=table.id, user=user, **arguments)
    assert table_seen(table) == before
    assert published == []


@NO_OPS
def test_under_the_lock_the_same_commands_check_again_and_publish_nothing(
    table, published, prepare, module, service, arguments
):
    """The read before the lock is a shortcut only: with it skipped (as when the table
    changed between the read and the lock), the locked body finds nothing to change."""
    user = seated(table, prepare(table))
    published.clear()
    locked = getattr(module, service).__wrapped__  # the table command, lock and all
    before = table_seen(table)
    locked(table_id=table.id, user=user, **arguments)
    assert table_seen(table) == before
    assert published == []


def test_sit_out_again_during_the_hand_publishes_nothing(table, published):
    deal(table)
    published.clear()
    user = seated(table, 1)
    seating.seat_sit_out(table_id=table.id, user=user)  # real: after this hand
    assert len(published) == 1
    seq = event_seq(table)
    seating.seat_sit_out(table_id=table.id, user=user)
    assert (event_seq(table), len(published)) == (seq, 1)


def test_a_request_made_again_publishes_nothing(table, published):
    user = seated(table, 1)
    blind_options.seat_blind_option_set(
        table_id=table.id, user=user, kind=blind_options.OVERBLIND, wanted=True
    )
    assert Seat.objects.get(table=table, player=user).wants_overblind
    assert len(published) == 1 and event_seq(table) == published[-1].version
    seq = event_seq(table)
    blind_options.seat_blind_option_set(
        table_id=table.id, user=user, kind=blind_options.OVERBLIND, wanted=True
    )
    assert (event_seq(table), len(published)) == (seq, 1)
    # Cancelled, it is a change again: announced.
    blind_options.seat_blind_option_set(
        table_id=table.id, user=user, kind=blind_options.OVERBLIND, wanted=False
    )
    assert event_seq(table) == seq + 1 and len(published) == 2


def test_sit_in_clearing_a_count_of_timeouts_alone_is_nobody_elses_business(table, published):
    user = seated(table, 1)
    Seat.objects.filter(table=table, player=user).update(consecutive_timeouts=1)
    seq = event_seq(table)
    seating.seat_sit_in(table_id=table.id, user=user)
    assert Seat.objects.get(table=table, player=user).consecutive_timeouts == 0
    assert (event_seq(table), published) == (seq, [])


def test_the_same_auto_top_up_order_elsewhere_takes_no_lock_and_here_adds_nothing_due(
    table, published, settings
):
    settings.TABLE_LOCK_TIMEOUT_MS = 200
    other = Table.objects.create(
        name="elsewhere", stake_level=table.stake_level, seats=6, next_hand_at=None
    )
    user = seated(table, 1)
    top_up.auto_top_up_set(table_id=table.id, user=user, mode=AutoTopUp.MAX)  # given
    assert PlayerSettings.objects.get(user=user).auto_top_up == AutoTopUp.MAX
    # Between hands it ran at once: the stack is at the maximum, and nothing is due now.
    assert Seat.objects.get(table=table, player=user).stack == table.stake_level.buy_in_max
    published.clear()
    seq = event_seq(table)
    top_up.auto_top_up_set(table_id=table.id, user=user, mode=AutoTopUp.MAX)
    assert (event_seq(table), published) == (seq, [])
    # Given again where the player does not sit: no lock, nothing written or published.
    with row_held(other):
        top_up.auto_top_up_set(table_id=other.id, user=user, mode=AutoTopUp.MAX)
    assert published == []


def test_a_mute_is_no_table_command(table, published, settings):
    settings.TABLE_LOCK_TIMEOUT_MS = 200
    user, other = seated(table, 1), seated(table, 2)
    seq = event_seq(table)
    with row_held(table):
        for _ in range(2):
            chat.chat_mute_set(table_id=table.id, user=user, player=other.username, muted=True)
        chat.chat_mute_set(table_id=table.id, user=user, player=other.username, muted=False)
        chat.chat_mute_set(table_id=table.id, user=user, player=other.username, muted=False)
    assert not ChatMute.objects.exists()
    assert (event_seq(table), published) == (seq, [])


def test_the_commands_that_change_something_still_lock_and_publish(table, published, settings):
    settings.TABLE_LOCK_TIMEOUT_MS = 200
    user = seated(table, 1)
    with row_held(table), pytest.raises(TableBusy):
        seating.seat_sit_out(table_id=table.id, user=user)
    changes = [
        lambda: blind_options.seat_blind_option_set(
            table_id=table.id, user=user, kind=blind_options.OVERBLIND, wanted=True
        ),
        lambda: seating.seat_sit_out(table_id=table.id, user=user),
        lambda: seating.seat_sit_in(table_id=table.id, user=user),
        lambda: play.seat_disconnected(table_id=table.id, user=user),
        lambda: play.seat_reconnected(table_id=table.id, user=user),
    ]
    for change in changes:
        seq, sent = event_seq(table), len(published)
        change()
        assert event_seq(table) > seq and len(published) > sent
    # A queued advance action is the player's alone (nothing is published), but it is
    # written, and cleared again.
    deal(table)
    _hand, state = current(table)
    waiting = next(n for n in state.seats if n != state.actor)
    player = seated(table, waiting)
    advance.seat_advance_set(table_id=table.id, user=player, kind="fold")
    assert Seat.objects.get(table=table, player=player).advance["kind"] == "fold"
    advance.seat_advance_set(table_id=table.id, user=player, kind=None)
    assert Seat.objects.get(table=table, player=player).advance is None


def test_a_stranger_is_still_told_they_are_not_seated(table):
    stranger = funded_player()
    for command in (
        lambda: seating.seat_sit_in(table_id=table.id, user=stranger),
        lambda: seating.seat_sit_out(table_id=table.id, user=stranger),
        lambda: seating.seat_leave(table_id=table.id, user=stranger),
        lambda: advance.seat_advance_set(table_id=table.id, user=stranger, kind=None),
        lambda: blind_options.seat_blind_option_set(
            table_id=table.id, user=stranger, kind=blind_options.STRADDLE, wanted=False
        ),
    ):
        with pytest.raises(Exception) as refused:
            command()
        assert getattr(refused.value, "code", None) == "not_seated"
    assert play.seat_reconnected(table_id=table.id, user=stranger) is False
