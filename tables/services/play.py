"""Playing commands: act on one's turn, the timeout of a turn, the reconnect bonus.

`hand_act` is the player's decision; `turn_timeout` is what the timer loop
(tables/timers.py) runs when the turn's deadline passed; `seat_disconnected` records
that a player's last connection to the table closed (and whether it was during their own
turn), and `seat_reconnected` gives a player whose connection dropped during their own
turn and came back before it ended the reconnect bonus, once per decision (RULES §5).
"""

from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from tables.engine.actions import Action, ActionKind
from tables.engine.errors import IllegalAction
from tables.engine.events import Protected
from tables.exceptions import IllegalTableAction, NotSeated, NotYourTurn, StaleCommand
from tables.messages import SeatsChanged
from tables.models import ProtectionUse, Seat
from tables.selectors import seats_public
from tables.services.command import (
    TableCommand,
    Unchanged,
    room_command,
    table_command,
    unchanged_before_lock,
)
from tables.services.hands import hand_continue, turn_announce

ACTION_KINDS = {"fold", "check", "call", "bet_raise"}


def _action_build(*, seat: int, kind: object, amount: object) -> Action:
    if kind not in ACTION_KINDS:
        raise IllegalTableAction(
            f"Unknown action {kind!r}: use fold, check, call or bet_raise.", code="no_such_action"
        )
    if kind == "bet_raise":
        if type(amount) is not int:
            raise IllegalTableAction(
                "A bet or raise needs a whole number of cents: the total you bet this round.",
                code="bad_amount",
            )
        return Action.bet_raise(seat, amount)
    return Action(ActionKind(kind), seat)


@table_command
def hand_act(
    cmd: TableCommand, *, user: User, kind: str, amount: int | None = None, turn: int | None = None
) -> None:
    """The player's decision on their turn. `turn`, when given, must be the turn asked."""
    hand = cmd.hand
    if hand is None:
        raise NotYourTurn("No hand is being played at this table.")
    # First: a retried act whose turn has passed (its answer was lost) is told so.
    if turn is not None and turn != hand.turn_version:
        raise StaleCommand("That action was for an earlier turn; the table has moved on.")
    seat = cmd.seat_of(user)
    if seat is None:
        raise NotSeated("You are not seated at this table.")
    if cmd.state.actor != seat.number or not cmd.dealt_in(seat):
        raise NotYourTurn("It is not your turn.")
    action = _action_build(seat=seat.number, kind=kind, amount=amount)
    try:
        cmd.apply(action)
    except IllegalAction as exc:
        raise IllegalTableAction(str(exc), code=exc.code) from exc
    if seat.consecutive_timeouts:
        seat.consecutive_timeouts = 0
        cmd.save_seat(seat, "consecutive_timeouts")
    hand_continue(cmd)


def _protection_allowed(*, seat: Seat, table_limit: int) -> bool:
    """`allin_protection_per_day`: 0 = unlimited, else a rolling 24 hours (finer point 8)."""
    if table_limit == 0:
        return True
    since = timezone.now() - timedelta(hours=24)
    used = ProtectionUse.objects.filter(player=seat.player, created_at__gte=since).count()
    return used < table_limit


@table_command
def hand_run_twice(cmd: TableCommand, *, user: User, agree: bool, turn: int | None = None) -> None:
    """A player asked whether to run it twice answers (in any order; the engine says
    who may). The last agreement, or any refusal, deals the rest and settles the hand.
    `turn`, when given, must be the question's (`run_twice_ask`)."""
    hand = cmd.hand
    if hand is None:
        raise NotYourTurn("No hand is being played at this table.")
    if turn is not None and turn != hand.turn_version:
        raise StaleCommand("That answer was for an earlier question; the table has moved on.")
    seat = cmd.seat_of(user)
    if seat is None:
        raise NotSeated("You are not seated at this table.")
    if not cmd.dealt_in(seat):
        raise NotYourTurn("You are not in this hand.")
    try:
        cmd.apply(Action.run_twice(seat.number, agree=agree))
    except IllegalAction as exc:
        raise IllegalTableAction(str(exc), code=exc.code) from exc
    if not cmd.state.asking_run_twice:
        hand_continue(cmd)
    # (Else others are still to answer, on the same clock.)


@room_command
def turn_timeout(cmd: TableCommand, *, hand_id: int, turn: int) -> bool:
    """Apply RULES §5 to a turn whose time ran out. Returns True when it acted.

    Does nothing when that turn is no longer the one waiting (the player acted, the hand
    ended) or its deadline has not come (it moved later: the reconnect bonus; the timer
    loop sees the new one). The question whether to run it twice is a turn too: its
    timeout refuses for whoever has not answered (it is no decision of RULES §5, so it
    counts toward no sit-out).
    """
    table, hand = cmd.table, cmd.hand
    if hand is None or hand.id != hand_id or hand.turn_version != turn:
        return False
    if hand.turn_deadline is not None and hand.turn_deadline > timezone.now():
        return False
    agreement = cmd.state.run_twice
    if agreement is not None and agreement.undecided:
        cmd.apply(Action.timeout(agreement.undecided[0]))
        hand_continue(cmd)
        return True
    seat = cmd.seat_at(cmd.state.actor)
    if seat is None:
        raise ValueError(f"hand {hand.id}: no seat for the actor")
    allowed = _protection_allowed(seat=seat, table_limit=table.stake_level.allin_protection_per_day)
    events = cmd.apply(Action.timeout(seat.number, protection_allowed=allowed))
    if any(isinstance(event, Protected) for event in events):
        ProtectionUse.objects.create(player=seat.player, hand=hand)
    # RULES §5: a player who times out twice in a row is sat out after the hand.
    seat.consecutive_timeouts += 1
    if seat.consecutive_timeouts >= 2:
        seat.sit_out_after_hand = True
    cmd.save_seat(seat, "consecutive_timeouts", "sit_out_after_hand")
    hand_continue(cmd)
    return True


def _no_drop_recorded(*, table_id: int, user: User) -> Unchanged[bool] | None:
    """No drop of this player is recorded at the table (or they are not seated): a
    reconnect has nothing to forget and no bonus to give, and takes no lock."""
    dropped = Seat.objects.filter(table_id=table_id, player=user).filter(
        Q(dropped_at__isnull=False) | Q(dropped_turn__isnull=False)
    )
    return None if dropped.exists() else Unchanged(False)


@unchanged_before_lock(_no_drop_recorded)
@table_command
def seat_reconnected(cmd: TableCommand, *, user: User) -> bool:
    """Grant the reconnect bonus if this player's connection dropped during this very turn,
    their own (RULES §5, finer point 10). Any recorded drop is forgotten: they are back.

    A drop is what `seat_disconnected` recorded; a second tab opened while the first is
    still connected finds none, and gets no bonus. With no drop recorded nothing changes
    and nothing is published (nor is the table locked: `_no_drop_recorded`).
    """
    cmd.moves_on = False  # a player back, even with the bonus, is not the table working
    seat = cmd.seat_of(user)
    if seat is None:
        return False
    dropped_turn = seat.dropped_turn
    if seat.dropped_at is not None or dropped_turn is not None:
        seat.dropped_at = None
        seat.dropped_turn = None
        cmd.save_seat(seat, "dropped_at", "dropped_turn")
        # Everyone's "disconnected" badge for this player goes.
        cmd.emit(SeatsChanged(seats=seats_public(cmd.seats)))
    hand = cmd.hand
    if (
        hand is None
        or hand.turn_bonus_used
        or hand.turn_deadline is None
        or dropped_turn is None
        or dropped_turn != hand.turn_version
    ):
        return False
    if hand.turn_deadline <= timezone.now():
        # Back after their time was out (the timeout not run yet): RULES §5 gives the
        # bonus only to a player who reconnects in time; the timeout rule applies.
        return False
    if cmd.state.actor != seat.number:
        return False
    hand.turn_bonus_used = True
    hand.turn_deadline += timedelta(seconds=cmd.table.reconnect_bonus_seconds)
    cmd.save_hand()
    turn_announce(cmd, reconnect_bonus_seconds=cmd.table.reconnect_bonus_seconds)
    return True


@table_command
def seat_disconnected(cmd: TableCommand, *, user: User) -> bool:
    """The player's last connection to this table closed: record the drop, and the turn
    it happened in when that turn was theirs. Returns True when it was their turn.

    The consumer calls it when no other socket of the player to this table is open, on
    any web process (their presence group, tables/consumers.py; docs/protocol.md).
    Nothing to record for a viewer who is not seated.
    """
    cmd.moves_on = False
    seat = cmd.seat_of(user)
    if seat is None:
        return False
    turn: int | None = None
    hand = cmd.hand
    in_turn = hand is not None and hand.turn_deadline is not None and not cmd.state.over
    if hand is not None and in_turn and cmd.state.actor == seat.number:
        turn = hand.turn_version
    seat.dropped_at = timezone.now()
    seat.dropped_turn = turn
    cmd.save_seat(seat, "dropped_at", "dropped_turn")
    # Everyone sees that the player dropped ("disconnected" beside their clock).
    cmd.emit(SeatsChanged(seats=seats_public(cmd.seats)))
    return turn is not None
