"""Seating commands: sit down with a buy-in, top up, sit out, sit in, leave.

Buy-in limits come from the stake level (RULES §4), raised by the no-ratholing rule for
a player who left the same stake level within `rathole_minutes`: each departure from any
of its tables is owed until a sit honours it (`tables.selectors.rathole_departure`).
Money moves through the cashier (wallet <-> the table's ledger account); the table account
always equals the sum of the seats' `stack`, because stacks only change when a hand is
settled.
"""

from collections.abc import Callable
from typing import Any

from accounts.models import User
from accounts.selectors import user_can_play, user_flags_allow_play
from cashier import services as cashier
from cashier.exceptions import CashierError
from cashier.models import LedgerTransaction, TransactionKind
from cashier.money import dollars
from tables import capacity
from tables.exceptions import (
    BuyInOutOfRange,
    HandInProgress,
    NotSeated,
    RoomBusy,
    SeatUnavailable,
    TableClosed,
    TableError,
)
from tables.ledger import table_account_ensure, table_account_get
from tables.models import Departure, Seat, SeatStatus, Table, TableStatus
from tables.selectors import buy_in_limits, rathole_departure, table_and_key_unused
from tables.services.blind_options import seats_announce
from tables.services.command import (
    TableCommand,
    Unchanged,
    table_command,
    unchanged_before_lock,
)
from tables.services.hands import hand_continue, hand_start_mark_due, seat_remove


def _money(call, **kwargs):
    """Run a cashier call, turning its refusal into a table error with its code."""
    try:
        return call(**kwargs)
    except CashierError as exc:
        raise TableError(exc.message, code=exc.code) from exc


def _seat_of(cmd: TableCommand, user: User) -> Seat:
    seat = cmd.seat_of(user)
    if seat is None:
        raise NotSeated("You are not seated at this table.")
    return seat


def _key_reused(message: str) -> TableError:
    return TableError(message, code="idempotency_key_reused")


def _replay(
    *, kind: TransactionKind, table: Table, user: User, amount: object, idempotency_key: str
) -> LedgerTransaction | None:
    """The buy-in or top-up this key already made at this table (see seat_take)."""
    return _money(
        cashier.table_movement_replay,
        kind=kind,
        user=user,
        account=table_account_get(table=table),
        amount=amount,
        idempotency_key=idempotency_key,
    )


@table_command
def seat_take(
    cmd: TableCommand,
    *,
    user: User,
    seat_number: int,
    buy_in: int,
    post_big_blind: bool = False,
    idempotency_key: str,
    capacity_asked: bool = False,
) -> Seat:
    """Sit down at a free seat with a buy-in from the wallet.

    A retry (same idempotency key, same amount and seat) is answered before any other
    check: while the seat that key made is still there, with that seat (nothing moves,
    nothing is announced); once the player has left it, with `idempotency_key_reused`.
    A key is never a second buy-in, so a replay can never seat anyone without a debit.
    Any other sit is refused `room_busy` while the room is past its capacity, or is
    letting new players in one at a time (tables/capacity.py), unless the room let it in
    already (`capacity_asked`, see `seat_take_unless_busy`).
    """
    if not user_can_play(user=user):
        raise TableError("Auditors and staff accounts do not play.", code="cannot_play")
    table = cmd.table
    replayed = _replay(
        kind=TransactionKind.BUY_IN,
        table=table,
        user=user,
        amount=buy_in,
        idempotency_key=idempotency_key,
    )
    if replayed is not None:
        seat = next((s for s in cmd.seats if s.buy_in_transaction_id == replayed.pk), None)
        if seat is None:
            raise _key_reused(
                "This idempotency key already seated you, at a seat you have since left; "
                "use a new key to sit down again."
            )
        if seat.number != seat_number:
            raise _key_reused(
                f"This idempotency key seated you at seat {seat.number}; "
                "use a new key for a new request."
            )
        return seat
    # After the replay: a player whose first answer was lost is seated, not refused.
    if not capacity_asked:
        capacity.refuse_new_seat_when_busy(user_id=user.pk, table_id=table.pk)
    if table.status == TableStatus.CLOSED:
        raise TableClosed("This table is closed.")
    if table.status == TableStatus.PAUSED:
        # No chips are taken to a table that deals no hands; its status is pushed live.
        raise TableClosed("This table is paused: no new players until it opens again.")
    if type(seat_number) is not int or not 1 <= seat_number <= table.seats:
        raise SeatUnavailable(f"Seats at this table are numbered 1 to {table.seats}.")
    if cmd.seat_of(user) is not None:
        raise SeatUnavailable("You are already seated at this table.")
    if cmd.seat_at(seat_number) is not None:
        raise SeatUnavailable(f"Seat {seat_number} is taken.")
    departure = rathole_departure(table=table, user=user, lock=True)
    low, high = buy_in_limits(stake=table.stake_level, departure=departure)
    if type(buy_in) is not int or not low <= buy_in <= high:
        raise BuyInOutOfRange(_buy_in_refusal(table=table, departure=departure, low=low, high=high))
    posting = _money(
        cashier.table_buy_in,
        user=user,
        account=table_account_ensure(table=table),
        amount=buy_in,
        idempotency_key=idempotency_key,
    )
    if not posting.created:  # cannot happen under the table lock; never seat without a debit
        raise _key_reused("This idempotency key was already used; use a new key.")
    if departure is not None:
        # This sit is the return that honours it (RULES §4; `rathole_departure`).
        departure.honoured_by = posting.transaction
        departure.save(update_fields=["honoured_by"])
    seat = Seat.objects.create(
        table=table,
        number=seat_number,
        player=user,
        stack=buy_in,
        status=SeatStatus.WAITING,
        post_big_blind=post_big_blind,
        buy_in_transaction=posting.transaction,
    )
    cmd.seat_added(seat)
    seats_announce(cmd)
    hand_start_mark_due(cmd)
    return seat


def seat_take_unless_busy(
    *, table_id: int, user: User, idempotency_key: str, **fields: Any
) -> Seat:
    """`seat_take` (with its `fields`), except that a sit a room past its capacity
    refuses (tables/capacity.py) is refused first, without the table's lock, when it
    cannot be a retry: its key has moved no chips (and the table is there).

    A full room refuses more sits than it takes: its players keep asking. Refused in
    `seat_take`, each cost a table command (the lock, the seats and hand read, the key's
    replay looked up) on the database thread that was full already. Here it costs one
    read. A key that moved chips (the retry of a sit whose answer was lost) goes on to
    `seat_take`, which answers it as the first time. A retry sent while its first
    request is still under way finds no chips moved yet and is refused; the first goes
    on, the player sees the seat taken on the table's stream, and the key, asked again,
    is answered with it. A sit let in here is not asked again under the lock: that
    wait could outlast a filling room's interval, and the seat of it go to another.
    """
    admitted = False
    if user_flags_allow_play(user=user):  # the others are told why by `seat_take`
        try:
            capacity.refuse_new_seat_when_busy(user_id=user.pk, table_id=table_id)
            admitted = True
        except RoomBusy:
            if table_and_key_unused(table_id=table_id, idempotency_key=idempotency_key):
                raise
    return seat_take(
        table_id=table_id,
        user=user,
        idempotency_key=idempotency_key,
        capacity_asked=admitted,
        **fields,
    )


def _buy_in_refusal(*, table: Table, departure: Departure | None, low: int, high: int) -> str:
    refusal = f"The buy-in must be from {dollars(low)} to {dollars(high)}."
    if departure is None or low == table.stake_level.buy_in_min:
        return refusal
    minutes = table.stake_level.rathole_minutes
    return (
        f"{refusal} You left this stake level with {dollars(departure.stack)} within the last "
        f"{minutes} minutes: you must bring at least {dollars(low)} (no ratholing)."
    )


def _made_for(seat: Seat, top_up: LedgerTransaction) -> bool:
    """Whether `top_up` (this player's, at this table) was made for this very seat.

    Table commands are serialised by the table lock, so a top-up of this seat was posted
    after the seat's buy-in, and one of an earlier seat before that seat's cash-out.
    """
    if seat.buy_in_transaction_id is not None:
        return top_up.pk > seat.buy_in_transaction_id
    return top_up.created_at >= seat.sat_down_at  # a seat from before the link existed


@table_command
def seat_top_up(cmd: TableCommand, *, user: User, amount: int, idempotency_key: str) -> Seat:
    """Add chips between hands, never above the maximum buy-in (RULES §4).

    A retry (same idempotency key and amount) is answered first, like `seat_take`'s:
    with the seat, if that top-up went to the seat the player holds now; otherwise with
    `idempotency_key_reused`. It never adds chips again.
    """
    if not user_can_play(user=user):  # say, a player made staff while seated
        raise TableError("Auditors and staff accounts do not play.", code="cannot_play")
    table = cmd.table
    replayed = _replay(
        kind=TransactionKind.TOP_UP,
        table=table,
        user=user,
        amount=amount,
        idempotency_key=idempotency_key,
    )
    if replayed is not None:
        seat = cmd.seat_of(user)
        if seat is None or not _made_for(seat, replayed):
            raise _key_reused(
                "This idempotency key topped up a seat you have since left; "
                "use a new key to top up again."
            )
        return seat
    seat = _seat_of(cmd, user)
    if cmd.dealt_in(seat):
        raise HandInProgress("You can top up between hands only; ask again when this hand ends.")
    room = table.stake_level.buy_in_max - seat.stack
    if type(amount) is not int or not 1 <= amount <= room:
        raise BuyInOutOfRange(
            f"You can add up to {dollars(max(room, 0))} (the maximum buy-in is "
            f"{dollars(table.stake_level.buy_in_max)})."
        )
    posting = _money(
        cashier.table_top_up,
        user=user,
        account=table_account_ensure(table=table),
        amount=amount,
        idempotency_key=idempotency_key,
    )
    if not posting.created:  # cannot happen under the table lock; never add chips twice
        raise _key_reused("This idempotency key was already used; use a new key.")
    seat.stack += amount
    cmd.save_seat(seat, "stack")
    seats_announce(cmd)
    hand_start_mark_due(cmd)
    return seat


def _seat_unless(test: Callable[[Seat], bool], *, table_id: int, user: User) -> Seat | None:
    """The player's seat at the table when `test` says a command would leave it as it
    is (read before the table's lock: `unchanged_before_lock`)."""
    seat = Seat.objects.filter(table_id=table_id, player=user).first()
    return seat if seat is not None and test(seat) else None


def _sitting_out_already(*, table_id: int, user: User) -> Unchanged[Seat] | None:
    seat = _seat_unless(lambda s: s.status == SeatStatus.SITTING_OUT, table_id=table_id, user=user)
    return None if seat is None else Unchanged(seat)


@unchanged_before_lock(_sitting_out_already)
@table_command
def seat_sit_out(cmd: TableCommand, *, user: User) -> Seat:
    """Stop being dealt in: at once between hands, after the hand when in one. Asked
    again, nothing changes and nothing is announced."""
    seat = _seat_of(cmd, user)
    if cmd.dealt_in(seat):
        if seat.sit_out_after_hand:
            return seat
        seat.sit_out_after_hand = True
    elif seat.status == SeatStatus.SITTING_OUT:
        return seat
    else:
        seat.status = SeatStatus.SITTING_OUT
    cmd.save_seat(seat, "status", "sit_out_after_hand")
    seats_announce(cmd)
    return seat


def _sit_in_changes(seat: Seat, *, post_big_blind: bool) -> bool:
    """Whether `sit_in` changes the seat: back from sitting out, a big blind asked for
    while waiting, a sit-out after the hand called off, or a count of timeouts cleared."""
    asks_blind = seat.status == SeatStatus.WAITING and post_big_blind and not seat.post_big_blind
    return (
        seat.status == SeatStatus.SITTING_OUT
        or asks_blind
        or seat.sit_out_after_hand
        or seat.consecutive_timeouts > 0
    )


def _sitting_in_already(
    *, table_id: int, user: User, post_big_blind: bool = False
) -> Unchanged[Seat] | None:
    seat = _seat_unless(
        lambda s: not _sit_in_changes(s, post_big_blind=post_big_blind),
        table_id=table_id,
        user=user,
    )
    return None if seat is None else Unchanged(seat)


@unchanged_before_lock(_sitting_in_already)
@table_command
def seat_sit_in(cmd: TableCommand, *, user: User, post_big_blind: bool = False) -> Seat:
    """Come back: like a newcomer, wait for the big blind or post one (RULES §4). A player
    already waiting for the big blind may ask to post one now instead. A player already
    in changes nothing, and nothing is announced."""
    seat = _seat_of(cmd, user)
    if not _sit_in_changes(seat, post_big_blind=post_big_blind):
        return seat
    shown = (seat.status, seat.post_big_blind, seat.sit_out_after_hand)
    seat.sit_out_after_hand = False
    seat.consecutive_timeouts = 0
    coming_back = seat.status == SeatStatus.SITTING_OUT
    if coming_back:
        if seat.stack == 0:
            raise BuyInOutOfRange("You have no chips at this table: top up first.")
        seat.status = SeatStatus.WAITING
        seat.post_big_blind = post_big_blind
    elif seat.status == SeatStatus.WAITING and post_big_blind:
        seat.post_big_blind = True
    cmd.save_seat(seat, "status", "post_big_blind", "sit_out_after_hand", "consecutive_timeouts")
    if (seat.status, seat.post_big_blind, seat.sit_out_after_hand) != shown:
        # (A count of timeouts cleared alone is nobody else's business.)
        seats_announce(cmd)
    if coming_back:
        # Only a player back from sitting out can make a hand possible; a repeated
        # "I'm back" must not queue a hand start each time.
        hand_start_mark_due(cmd)
    return seat


def _leaving_already(*, table_id: int, user: User) -> Unchanged[bool] | None:
    seat = _seat_unless(lambda s: s.leave_after_hand, table_id=table_id, user=user)
    return None if seat is None else Unchanged(False)


@unchanged_before_lock(_leaving_already)
@table_command
def seat_leave(cmd: TableCommand, *, user: User) -> bool:
    """Leave the table; the whole stack goes back to the wallet.

    A player dealt into the hand in progress leaves when it ends (folding when the action
    reaches them, refusing to run it twice when asked). Returns True when they left at
    once. Asked again meanwhile, nothing changes and nothing is announced.
    """
    seat = _seat_of(cmd, user)
    if cmd.dealt_in(seat):
        agreement = cmd.state.run_twice
        asked = agreement is not None and seat.number in agreement.undecided
        on_turn = cmd.state.actor == seat.number or asked
        if seat.leave_after_hand and not on_turn:
            return False
        seat.leave_after_hand = True
        cmd.save_seat(seat, "leave_after_hand")
        if on_turn:
            hand_continue(cmd)  # (folds, or refuses to run it twice, for them now)
        else:
            seats_announce(cmd)
        return False
    seat_remove(cmd, seat)
    seats_announce(cmd)
    return True
