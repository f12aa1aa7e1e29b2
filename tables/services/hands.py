"""Dealing, advancing and settling hands: the table side of the engine.

`hand_start_if_ready` deals a new hand when the table may (open, no hand in progress,
the pause over, two or more players ready); `hand_start_due` is the command the timer
loop (tables/timers.py) runs when the table's `next_hand_at` has come, and
`hand_start_mark_due` is how a command that may make a deal possible asks for one.
`hand_continue` is called after every engine transition: it folds players who asked to
leave when their turn comes (checks for them when that is free; refuses for them when
asked to run it twice), then either starts the next turn (its deadline, which the timer
loop watches), asks the players all-in whether to run it twice (a turn's deadline too),
or settles the hand (stacks, rake to the house, leavers cashed out, the next deal due
after the pause). A player whose account may no longer play (banned or made staff while
seated) leaves at the end of their hand, or at the next deal. All of them work inside a
table command (tables/services/command.py).

The deal and the settling are the room's own work (`cmd.room_work`), whichever command
runs them, and `hand_start_due` is the timer loop's (`@room_command`): only their
failures count toward pausing the table (tables/services/command.py says why).
"""

import logging
from datetime import datetime, timedelta

from django.utils import timezone

from accounts.selectors import user_flags_allow_play
from cashier import services as cashier
from tables import rows
from tables.engine.actions import Action
from tables.engine.advance import advance_action, advance_still_valid
from tables.engine.deck import deck_commitment, new_salt, shuffled_deck
from tables.engine.presets import advance_options, bet_presets
from tables.engine.state import HandState, start_hand
from tables.hand_helper import shown_hands
from tables.ledger import table_account_ensure
from tables.messages import AdvanceNote, RunTwiceAsk, SeatLeft, ShowdownHands, Turn
from tables.models import Departure, Hand, HandPlayer, HandStatus, Seat, SeatStatus, TableStatus
from tables.rake import rake_contributions
from tables.services.blind_options import (
    blind_options_note,
    blind_requests_answer,
    seats_announce,
)
from tables.services.command import TableCommand, room_command
from tables.services.config import stake_config
from tables.services.dealing import deal_plan, kill_for_next_hand
from tables.services.top_up import auto_top_up_after_hand

logger = logging.getLogger(__name__)


def hand_start_if_ready(cmd: TableCommand) -> Hand | None:
    """Deal the next hand if the table may; return it (None when not dealt)."""
    with cmd.room_work("the deal"):
        return _hand_start(cmd)


def _hand_start(cmd: TableCommand) -> Hand | None:
    table = cmd.table
    now = timezone.now()
    if table.status != TableStatus.OPEN or cmd.hand is not None:
        return None
    if table.next_hand_at is not None and table.next_hand_at > now:
        return None
    barred = [s for s in cmd.seats if not user_flags_allow_play(user=s.player)]
    for seat in barred:
        # Banned or made staff while seated (their socket was closed or refused, and
        # tables/session_watch.py says why): they are not dealt in, and their seat is
        # given up, the stack back to their wallet, rather than hold chips and a seat
        # at the table for ever.
        seat_remove(cmd, seat)
    if barred:
        seats_announce(cmd)
    plan = deal_plan(seats=cmd.seats, previous_button=table.button_seat)
    if plan is None:
        return None
    deck = shuffled_deck()
    salt = new_salt()
    commitment = deck_commitment(deck, salt)
    numbers = rows.hand_numbers_next(table.pk)
    config = stake_config(stake=table.stake_level)
    state, events = start_hand(
        config,
        plan.entries,
        button=plan.button,
        deck=deck,
        hand_id=f"{table.id}-{numbers.number}",
        kill=kill_for_next_hand(table=table, seats=cmd.seats),
        deck_commitment=commitment,
    )
    hand = Hand(
        id=numbers.id,
        table=table,
        number=numbers.number,
        button=plan.button,
        deck_commitment=commitment,
        salt=salt,
        # Turn numbers go on from the last hand, so an action meant for a turn of an
        # earlier hand can never match a turn of this one.
        turn_version=numbers.last_turn,
        started_at=now,
    )
    dealt = {entry.seat: cmd.seat_at(entry.seat).player_id for entry in plan.entries}
    # Who is who in this hand, by user id: the engine state keeps only screen names.
    players = [
        HandPlayer(hand=hand, seat=entry.seat, user_id=dealt[entry.seat], screen_name=entry.player)
        for entry in plan.entries
    ]
    # The hand and its players are written at the command's end, with its other writes.
    cmd.hand_begin(hand=hand, state=state, players=players)
    for seat in cmd.seats:
        if seat.number in dealt and (seat.status != SeatStatus.ACTIVE or seat.post_big_blind):
            seat.status = SeatStatus.ACTIVE
            seat.post_big_blind = False
            cmd.save_seat(seat, "status", "post_big_blind")
    table.button_seat = plan.button
    table.next_hand_at = None
    cmd.save_table("button_seat", "next_hand_at")
    cmd.hand_events(events)
    # Each straddle or overblind request was for this hand: answered (posted or why not)
    # and cleared, with the deal's last event.
    blind_requests_answer(cmd)
    hand_continue(cmd)
    if cmd.hand is not None:
        # The button has moved: who may ask for the next hand's straddle has changed.
        blind_options_note(cmd)
    return hand


@room_command
def hand_start_due(cmd: TableCommand) -> Hand | None:
    """Deal the table's next hand if it may be dealt now (the timer loop's deal).

    A deal that was due and cannot be made (too few players ready, the table paused) is
    due no more, or the loop would try it again on every pass: the next command that may
    make it possible marks it due again (`hand_start_mark_due`), as the end of a hand does.
    """
    hand = hand_start_if_ready(cmd)
    table = cmd.table
    if hand is None and table.next_hand_at is not None and table.next_hand_at <= timezone.now():
        table.next_hand_at = None
        cmd.save_table("next_hand_at")
    return hand


def hand_start_mark_due(cmd: TableCommand) -> None:
    """Have the timer loop try a deal at once, or when the pause between hands ends if
    that is later (a deal already due stays due)."""
    table = cmd.table
    if table.status == TableStatus.OPEN and cmd.hand is None and table.next_hand_at is None:
        table.next_hand_at = timezone.now()
        cmd.save_table("next_hand_at")


def hand_continue(cmd: TableCommand) -> None:
    """After an engine transition: clear advance actions the table has outgrown, play
    the actor's own queued action or fold a leaver, then start the next turn or settle."""
    hand, state = cmd.hand, cmd.state
    if hand is None:
        raise ValueError("only a hand in progress continues")
    while True:
        for seat in cmd.seats:
            if seat.advance and (state.over or not advance_still_valid(seat.advance, state)):
                _advance_clear(cmd, seat)
        if state.over:
            break
        if state.run_twice is not None and state.asking_run_twice:
            # A player who asked to leave refuses to run it twice, as they fold on a turn.
            leaver = next((s for s in cmd.seats if _leaving_undecided(cmd, s)), None)
            if leaver is None:
                break
            cmd.apply(Action.run_twice(leaver.number, agree=False))
            continue
        actor = cmd.seat_at(state.actor)
        if actor is None:
            break
        if actor.leave_after_hand:
            # A player who asked to leave folds when the action reaches them, or checks
            # when checking is free: the engine refuses a fold that costs nothing.
            action = leaver_action(state, actor.number)
        elif actor.advance:
            action = advance_action(actor.advance, state, actor.number)
            _advance_clear(cmd, actor)
        else:
            action = None
        if action is None:
            break
        if not state.can(action):
            # Never expected (both choices above ask the engine first), but an action the
            # engine refuses must not fail the command of whoever moved the hand on: the
            # turn goes to its player and their clock instead.
            logger.error(
                "table %s: %s refused by the engine; the turn goes on", hand.table_id, action
            )
            break
        cmd.apply(action)
    cmd.save_hand()
    if state.over:
        _hand_settle(cmd, hand=hand, state=state)
    elif state.run_twice is not None and state.asking_run_twice:
        run_twice_ask(cmd, seats=list(state.run_twice.undecided))
    else:
        turn_start(cmd)


def _leaving_undecided(cmd: TableCommand, seat: Seat) -> bool:
    """Whether the seat's player asked to leave and is still asked to run it twice."""
    agreement = cmd.state.run_twice
    return (
        seat.leave_after_hand
        and agreement is not None
        and seat.number in agreement.undecided
        and cmd.dealt_in(seat)
    )


def leaver_action(state: HandState, seat: int) -> Action:
    """What a player who asked to leave does on their turn: check if free, else fold."""
    return Action.check(seat) if state.legal_actions().can_check else Action.fold(seat)


def _advance_clear(cmd: TableCommand, seat: Seat) -> None:
    """Forget the seat's advance action and tell only its player, with the last event."""
    seat.advance = None
    cmd.save_seat(seat, "advance")
    cmd.note(user_id=seat.player_id, note=AdvanceNote(advance=None))


def turn_start(cmd: TableCommand) -> None:
    """Give the actor their time (RULES §5) and tell the table whose turn it is."""
    table = cmd.table
    _turn_next(cmd, seconds=table.action_seconds + table.time_bank_seconds)
    turn_announce(cmd)


def run_twice_ask(cmd: TableCommand, *, seats: list[int]) -> None:
    """Ask the players all-in at `seats` whether to run it twice. Their clock is a turn
    of the hand (the action clock, no time bank): `turn_timeout` ends it."""
    table = cmd.table
    hand, deadline = _turn_next(cmd, seconds=table.action_seconds)
    cmd.emit(
        RunTwiceAsk(
            hand=hand.id, turn=hand.turn_version, deadline=deadline.isoformat(), seats=seats
        )
    )


def _turn_next(cmd: TableCommand, *, seconds: int) -> tuple[Hand, datetime]:
    """Number the hand's next turn and give it `seconds` from now: the hand and the
    turn's deadline (`turn_deadline`)."""
    hand = cmd.hand
    if hand is None:
        raise ValueError("a turn starts in a hand in progress")
    deadline = timezone.now() + timedelta(seconds=seconds)
    hand.turn_version += 1
    hand.turn_bonus_used = False
    hand.turn_deadline = deadline
    cmd.save_hand()
    return hand, deadline


def turn_announce(cmd: TableCommand, *, reconnect_bonus_seconds: int | None = None) -> None:
    """The `turn` message: the actor and their clock for all, legal actions for the actor
    (`reconnect_bonus_seconds`: the clock was just extended by the reconnect bonus)."""
    hand = cmd.hand
    if hand is None or hand.turn_deadline is None:
        raise ValueError("a turn is announced only once its deadline is set")
    state = cmd.state
    legal = state.legal_actions()
    cmd.emit(
        Turn(
            hand=hand.id,
            seat=state.actor,
            turn=hand.turn_version,
            deadline=hand.turn_deadline.isoformat(),
            time_bank_seconds=cmd.table.time_bank_seconds,
            to_match=state.to_match,
            pot_total=state.pot_total,
            legal_actions=legal.to_dict(),
            presets=bet_presets(state, legal),
            waiting=advance_options(state),
            reconnect_bonus_seconds=reconnect_bonus_seconds,
        )
    )


def _hand_settle(cmd: TableCommand, *, hand: Hand, state: HandState) -> None:
    """Stacks, rake to the house, leavers cashed out, sit-outs, the next hand scheduled:
    the room's work, whichever command's action ended the hand."""
    with cmd.room_work("settling the hand"):
        _hand_settle_now(cmd, hand=hand, state=state)


def _hand_settle_now(cmd: TableCommand, *, hand: Hand, state: HandState) -> None:
    table = cmd.table
    result = state.result
    if result is None:
        raise ValueError("only a finished hand is settled")
    now = timezone.now()
    hand.status = HandStatus.FINISHED
    hand.ended_at = now
    hand.turn_deadline = None
    hand.rake = result.rake
    if result.rake:
        cashier.hand_rake_collect(
            account=table_account_ensure(table=table), amount=result.rake, hand_id=hand.id
        )
        cmd.insert(rake_contributions(hand=hand, state=state, players=cmd.dealt))
    final = dict(zip(state.seats, state.stacks, strict=True))
    dealt = [s for s in cmd.seats if cmd.dealt.get(s.number) == s.player_id]
    for seat in dealt:
        seat.stack = final[seat.number]
    # Before a busted stack sits its player out: an auto top-up may refill it.
    topped_up = auto_top_up_after_hand(cmd, dealt)
    for seat in list(cmd.seats):
        if seat.leave_after_hand or not user_flags_allow_play(user=seat.player):
            seat_remove(cmd, seat)
            continue
        seat.advance = None
        if seat.sit_out_after_hand or seat.stack == 0:
            seat.status = SeatStatus.SITTING_OUT
            seat.sit_out_after_hand = False
        cmd.save_seat(seat, "stack", "status", "sit_out_after_hand", "advance")
    hands = shown_hands(state)
    if hands:
        cmd.emit(ShowdownHands(hand=hand.id, hands=hands, second=shown_hands(state, second=True)))
    seats_announce(cmd)
    for user_id, note in topped_up.items():
        cmd.note(user_id=user_id, note=note)
    # The timer loop deals then (an open table's; a paused one's waits to be re-opened).
    table.next_hand_at = now + timedelta(milliseconds=table.pause_between_hands_ms)
    cmd.save_table("next_hand_at")


def seat_remove(cmd: TableCommand, seat: Seat) -> None:
    """Cash the seat's stack out to the wallet, remember it for ratholing, free the seat.

    The seat's player is not in a hand in progress.
    """
    table = cmd.table
    if seat.stack > 0:
        cashier.table_cash_out(
            user=seat.player,
            account=table_account_ensure(table=table),
            amount=seat.stack,
            idempotency_key=f"leave:seat:{seat.id}",
        )
    Departure.objects.create(player=seat.player, stake_level=table.stake_level, stack=seat.stack)
    cmd.emit(SeatLeft(seat=seat.number, player=seat.player.username))
    cmd.seat_deleted(seat)
