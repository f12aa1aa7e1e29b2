"""Dealing, advancing and settling hands: the table side of the engine.

`hand_start_if_ready` deals a new hand when the table may (open, no hand in progress,
the pause over, two or more players ready). `hand_continue` is called after every engine
transition: it folds players who asked to leave when their turn comes (checks for them
when that is free), then either starts the next turn (deadline, timeout task) or settles
the hand (stacks, rake to the house, leavers cashed out, next hand scheduled). All of
them run under the table lock.
"""

import logging
from datetime import timedelta

from django.db.models import Max
from django.utils import timezone

from cashier import services as cashier
from cashier.rake import rake_contributions_record
from tables.engine.actions import Action
from tables.engine.advance import advance_action, advance_still_valid
from tables.engine.config import KillInfo
from tables.engine.deal_plan import DealPlan, SeatRecord
from tables.engine.deal_plan import deal_plan as plan_the_deal
from tables.engine.deck import deck_commitment, new_salt, shuffled_deck
from tables.engine.state import HandState, apply_in_place, start_hand
from tables.models import (
    Departure,
    Hand,
    HandPlayer,
    HandStatus,
    Seat,
    SeatStatus,
    Table,
    TableStatus,
)
from tables.scheduling import schedule_hand_start, schedule_turn_timeout
from tables.selectors import hand_in_progress, hand_players_by_seat, seats_public, table_seats
from tables.services.config import stake_config
from tables.services.recorder import Recorder

logger = logging.getLogger(__name__)


def users_by_seat(seats: list[Seat]) -> dict[int, int]:
    return {seat.number: seat.player_id for seat in seats}


def deal_plan(*, seats: list[Seat], previous_button: int | None) -> DealPlan | None:
    """Who is dealt in and where the button goes (RULES §3 step 1, §4, finer point 16):
    the engine's `deal_plan` over these seats (tables/engine/deal_plan.py)."""
    records = [
        SeatRecord(
            number=s.number,
            player=s.player.username,
            stack=s.stack,
            playing=s.status == SeatStatus.ACTIVE,
            waiting=s.status == SeatStatus.WAITING,
            sat_down_at=s.sat_down_at,
            post_big_blind=s.post_big_blind,
            leaving=s.leave_after_hand,
            straddle=s.wants_straddle,
            overblind=s.wants_overblind,
            chop=s.player.chop_blinds,
            auto_muck=s.player.auto_muck,
        )
        for s in seats
    ]
    return plan_the_deal(records, previous_button=previous_button)


def kill_for_next_hand(*, table: Table, seats: list[Seat]) -> KillInfo | None:
    """The kill won in the last hand, if the killer is still seated and playing."""
    last = Hand.objects.filter(table=table, status=HandStatus.FINISHED).order_by("-number").first()
    if last is None:
        return None
    state = HandState.from_dict(last.state)
    kill = state.result.next_kill if state.result else None
    if kill is None:
        return None
    killer = hand_players_by_seat(hand=last).get(kill.seat)
    for seat in seats:
        if seat.number == kill.seat:
            same_player = seat.player_id == killer
            playing = seat.status == SeatStatus.ACTIVE and not seat.leave_after_hand
            return kill if same_player and playing else None
    return None


def hand_start_if_ready(*, table: Table) -> Hand | None:
    """Deal the next hand if the table may; return it (None when not dealt)."""
    from tables.services.blind_options import blind_options_note, blind_requests_answer

    now = timezone.now()
    if table.status != TableStatus.OPEN or hand_in_progress(table=table) is not None:
        return None
    if table.next_hand_at is not None and table.next_hand_at > now:
        return None
    seats = table_seats(table=table)
    plan = deal_plan(seats=seats, previous_button=table.button_seat)
    if plan is None:
        return None
    deck = shuffled_deck()
    salt = new_salt()
    commitment = deck_commitment(deck, salt)
    previous = Hand.objects.filter(table=table).aggregate(n=Max("number"), t=Max("turn_version"))
    number = (previous["n"] or 0) + 1
    config = stake_config(stake=table.stake_level)
    state, events = start_hand(
        config,
        plan.entries,
        button=plan.button,
        deck=deck,
        hand_id=f"{table.id}-{number}",
        kill=kill_for_next_hand(table=table, seats=seats),
        deck_commitment=commitment,
    )
    hand = Hand.objects.create(
        table=table,
        number=number,
        config=config.to_dict(),
        state=state.to_dict(),
        button=plan.button,
        deck_commitment=commitment,
        salt=salt,
        # Turn numbers go on from the last hand, so an action meant for a turn of an
        # earlier hand can never match a turn of this one.
        turn_version=previous["t"] or 0,
    )
    by_number = {seat.number: seat for seat in seats}
    # Who is who in this hand, by user id: the engine state keeps only screen names.
    HandPlayer.objects.bulk_create(
        HandPlayer(
            hand=hand,
            seat=entry.seat,
            user_id=by_number[entry.seat].player_id,
            screen_name=entry.player,
        )
        for entry in plan.entries
    )
    dealt = {entry.seat for entry in plan.entries}
    for seat in seats:
        if seat.number in dealt and (seat.status != SeatStatus.ACTIVE or seat.post_big_blind):
            seat.status = SeatStatus.ACTIVE
            seat.post_big_blind = False
            seat.save(update_fields=["status", "post_big_blind"])
    table.button_seat = plan.button
    table.next_hand_at = None
    table.save(update_fields=["button_seat", "next_hand_at"])
    recorder = Recorder(table)
    recorder.engine_events(hand=hand, events=events, users_by_seat=users_by_seat(seats))
    # Each straddle or overblind request was for this hand: answered (posted or why not)
    # and cleared, with the deal's last event.
    blind_requests_answer(table=table, seats=seats, state=state, recorder=recorder)
    hand_continue(table=table, hand=hand, state=state, seats=seats, recorder=recorder)
    if hand.status == HandStatus.IN_PROGRESS:
        # The button has moved: who may ask for the next hand's straddle has changed.
        blind_options_note(table=table, seats=seats, recorder=recorder)
    recorder.save()
    return hand


def hand_continue(
    *, table: Table, hand: Hand, state: HandState, seats: list[Seat], recorder: Recorder
) -> HandState:
    """After an engine transition: clear advance actions the table has outgrown, play
    the actor's own queued action or fold a leaver, then start the next turn or settle."""
    by_number = {seat.number: seat for seat in seats}
    users = users_by_seat(seats)
    while True:
        for seat in seats:
            if seat.advance and (state.over or not advance_still_valid(seat.advance, state)):
                _advance_clear(seat, recorder)
        if state.over:
            break
        actor = by_number.get(state.actor)
        if actor is None:
            break
        if actor.leave_after_hand:
            # A player who asked to leave folds when the action reaches them, or checks
            # when checking is free: the engine refuses a fold that costs nothing.
            action = leaver_action(state, actor.number)
        elif actor.advance:
            action = advance_action(actor.advance, state, actor.number)
            _advance_clear(actor, recorder)
        else:
            action = None
        if action is None:
            break
        if not state.can(action):
            # Never expected (both choices above ask the engine first), but an action the
            # engine refuses must not fail the command of whoever moved the hand on: the
            # turn goes to its player and their clock instead.
            logger.error("table %s: %s refused by the engine; the turn goes on", table.id, action)
            break
        events = apply_in_place(state, action)
        recorder.engine_events(hand=hand, events=events, users_by_seat=users)
    hand.state = state.to_dict()
    if state.over:
        _hand_settle(table=table, hand=hand, state=state, seats=seats, recorder=recorder)
    else:
        turn_start(table=table, hand=hand, state=state, seats=seats, recorder=recorder)
    hand.save()
    return state


def leaver_action(state: HandState, seat: int) -> Action:
    """What a player who asked to leave does on their turn: check if free, else fold."""
    return Action.check(seat) if state.legal_actions().can_check else Action.fold(seat)


def _advance_clear(seat: Seat, recorder: Recorder) -> None:
    """Forget the seat's advance action and tell only its player, with the last event."""
    seat.advance = None
    seat.save(update_fields=["advance"])
    recorder.private_note(user_id=seat.player_id, note={"advance": None})


def turn_start(
    *, table: Table, hand: Hand, state: HandState, seats: list[Seat], recorder: Recorder
) -> None:
    """Give the actor their time (RULES §5) and tell the table whose turn it is."""
    now = timezone.now()
    hand.turn_version += 1
    hand.turn_bonus_used = False
    hand.turn_deadline = now + timedelta(seconds=table.action_seconds + table.time_bank_seconds)
    turn_announce(table=table, hand=hand, state=state, seats=seats, recorder=recorder)
    schedule_turn_timeout(
        table_id=table.id, hand_id=hand.id, turn=hand.turn_version, at=hand.turn_deadline
    )


def turn_announce(
    *, table: Table, hand: Hand, state: HandState, seats: list[Seat], recorder: Recorder
) -> None:
    """The `turn` message: the actor and their clock for all, legal actions for the actor."""
    deadline = hand.turn_deadline
    if deadline is None:
        raise ValueError("a turn is announced only once its deadline is set")
    public = {
        "type": "turn",
        "hand": hand.id,
        "seat": state.actor,
        "turn": hand.turn_version,
        "deadline": deadline.isoformat(),
        "time_bank_seconds": table.time_bank_seconds,
    }
    actor_user = users_by_seat(seats).get(state.actor)
    private = {}
    if actor_user is not None:
        private[actor_user] = {**public, "legal_actions": state.legal_actions().to_dict()}
    recorder.message(public, private)


def _hand_settle(
    *, table: Table, hand: Hand, state: HandState, seats: list[Seat], recorder: Recorder
) -> None:
    """Stacks, rake to the house, leavers cashed out, sit-outs, the next hand scheduled."""
    from tables.services.blind_options import blind_options_note
    from tables.services.seating import seat_remove

    result = state.result
    if result is None:
        raise ValueError("only a finished hand is settled")
    now = timezone.now()
    hand.status = HandStatus.FINISHED
    hand.ended_at = now
    hand.turn_deadline = None
    hand.rake = result.rake
    if result.rake:
        cashier.hand_rake_collect(table=table, amount=result.rake, hand_id=hand.id)
        rake_contributions_record(hand=hand, state=state)
    final = dict(zip(state.seats, state.stacks, strict=True))
    dealt_to = hand_players_by_seat(hand=hand)
    for seat in seats:
        if seat.number in final and dealt_to.get(seat.number) == seat.player_id:
            seat.stack = final[seat.number]
        if seat.leave_after_hand:
            seat_remove(table=table, seat=seat, recorder=recorder)
            continue
        seat.advance = None
        if seat.sit_out_after_hand or seat.stack == 0:
            seat.status = SeatStatus.SITTING_OUT
            seat.sit_out_after_hand = False
        seat.save(update_fields=["stack", "status", "sit_out_after_hand", "advance"])
    remaining = [s for s in seats if not s.leave_after_hand]
    recorder.message({"type": "seats", "seats": seats_public(remaining)})
    blind_options_note(table=table, seats=remaining, recorder=recorder)
    table.next_hand_at = now + timedelta(milliseconds=table.pause_between_hands_ms)
    table.save(update_fields=["next_hand_at"])
    if table.status == TableStatus.OPEN:
        schedule_hand_start(table_id=table.id, at=table.next_hand_at)


def seat_remove(*, table: Table, seat: Seat, recorder: Recorder) -> None:
    """Cash the seat's stack out to the wallet, remember it for ratholing, free the seat.

    The caller holds the table lock and is not in a hand with this seat.
    """
    if seat.stack > 0:
        cashier.table_cash_out(
            user=seat.player,
            table=table,
            amount=seat.stack,
            idempotency_key=f"leave:seat:{seat.id}",
        )
    Departure.objects.create(player=seat.player, stake_level=table.stake_level, stack=seat.stack)
    recorder.message({"type": "seat_left", "seat": seat.number, "player": seat.player.username})
    seat.delete()
