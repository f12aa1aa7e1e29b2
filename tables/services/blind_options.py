"""Straddle and overblind requests: who may ask for one, and what the deal made of it.

RULES §7 and finer points 3, 4 and 6. A seated player asks for (or cancels) a straddle or
an overblind for the next hand dealt; the request is a flag on the seat
(`Seat.wants_straddle`, `wants_overblind`) that the deal hands to the engine, which
posts it when the seat still qualifies (tables/engine/state.py `start_hand`).

When asked, a request is judged against the next hand as the table stands now (the
button moved on from the last hand, the players who will be dealt in): a refusal says
why (`BlindOptionNotAllowed`, `BlindOptionSeat`, `BlindOptionCannotCover`).

* Straddle: the stake level allows it; the seat is the one left of the big blind in the
  next hand, with three or more players dealt in; not a kill hand.
* Overblind: the stake level allows it, fixed or spread limit only; the seat is dealt
  into the next hand (any seat, blinds too); not a kill hand. One per hand: several may
  ask, and the first in seat order from the button's left posts it (finer point 6).
* Either: the stack covers it in full (two big blinds, plus the ante): the engine never
  posts a voluntary blind short. While a hand is in progress the seat's stack is the one
  it started that hand with; the deal checks again.

The table can change between the request and the deal (a player sits down and the
button's neighbours shift, a kill is won, the player busts or sits out). We decided: a
request is for the next hand dealt only. At every deal each request at the table is
answered and cleared, posted or not, and its player is told which and, if not, why
(`blind_requests` below); to straddle again they ask again.

What the browser shows comes from here too: every seat list the table announces carries,
for each seated player privately, `blind_options` (which options are open to them now and
which they asked for), and so does their snapshot.
"""

from typing import Any

from accounts.models import User
from cashier.money import dollars
from tables.engine.config import LIMIT_STRUCTURES
from tables.engine.positions import straddle_seat
from tables.exceptions import (
    BlindOptionCannotCover,
    BlindOptionNotAllowed,
    BlindOptionSeat,
    NotSeated,
    TableError,
)
from tables.messages import BlindOptionAsked, BlindOptionsNote, BlindRequestsNote, SeatsChanged
from tables.models import Seat, StakeLevel
from tables.selectors import seats_public
from tables.services.command import (
    TableCommand,
    Unchanged,
    table_command,
    unchanged_before_lock,
)
from tables.services.dealing import NextHand, next_hand_outlook

STRADDLE = "straddle"
OVERBLIND = "overblind"
KINDS = (STRADDLE, OVERBLIND)
NAMES = {STRADDLE: "a straddle", OVERBLIND: "an overblind"}


def blind_option_allowed(*, stake: StakeLevel, kind: str) -> bool:
    """Whether the stake level takes this option at all."""
    if kind == STRADDLE:
        return stake.allow_straddle
    return stake.allow_overblind and stake.structure in LIMIT_STRUCTURES


def blind_option_cost(*, stake: StakeLevel) -> int:
    """What a straddle or overblind needs behind: two big blinds, and the ante first."""
    return stake.ante + 2 * stake.big_blind


def blind_option_refusal(
    *, stake: StakeLevel, seat: Seat, kind: str, outlook: NextHand
) -> TableError | None:
    """Why this seat may not ask for `kind` for the next hand (None: it may)."""
    name = NAMES[kind]
    if not blind_option_allowed(stake=stake, kind=kind):
        where = " (fixed and spread limit only)" if kind == OVERBLIND else ""
        return BlindOptionNotAllowed(f"This stake level does not allow {name}{where}.")
    if outlook.kill:
        return BlindOptionNotAllowed(f"The next hand is a kill hand: it takes no {kind}.")
    if seat.number not in outlook.dealt:
        return BlindOptionSeat(
            f"You are not dealt into the next hand (waiting for the big blind, sitting out "
            f"or leaving), so you cannot post {name}."
        )
    if kind == STRADDLE and outlook.straddle_seat is None:
        return BlindOptionSeat("A straddle needs three or more players dealt in.")
    if kind == STRADDLE and seat.number != outlook.straddle_seat:
        return BlindOptionSeat(
            "The straddle is open only to the player left of the big blind: seat "
            f"{outlook.straddle_seat} in the next hand."
        )
    cost = blind_option_cost(stake=stake)
    if seat.stack < cost:
        return BlindOptionCannotCover(_cannot_cover(stake=stake, kind=kind, stack=seat.stack))
    return None


def _cannot_cover(*, stake: StakeLevel, kind: str, stack: int) -> str:
    ante = f" plus the {dollars(stake.ante)} ante" if stake.ante else ""
    return (
        f"{NAMES[kind].capitalize()} is {dollars(2 * stake.big_blind)} (two big blinds){ante} "
        f"and is posted in full only; you have {dollars(stack)}."
    )


def _wants(seat: Seat, kind: str) -> bool:
    return seat.wants_straddle if kind == STRADDLE else seat.wants_overblind


def _nothing_to_cancel(
    *, table_id: int, user: User, kind: str, wanted: bool
) -> Unchanged[Seat] | None:
    """A cancel of a request the seat never made changes nothing: answered without the
    table's lock (read before it)."""
    if wanted or kind not in KINDS:
        return None
    seat = Seat.objects.filter(table_id=table_id, player=user).first()
    return None if seat is None or _wants(seat, kind) else Unchanged(seat)


@unchanged_before_lock(_nothing_to_cancel)
@table_command
def seat_blind_option_set(cmd: TableCommand, *, user: User, kind: str, wanted: bool) -> Seat:
    """Ask for (`wanted`) or cancel a straddle or overblind for the next hand.

    Asking is refused with the reason when the option is not open to the seat (above);
    cancelling always works. Either way the player's `blind_options` are announced, with
    everyone told of the request; unless nothing changed (a cancel of nothing, a request
    made again), which is answered and announced to nobody.
    """
    if kind not in KINDS:
        raise TableError(f"Ask for a {' or an '.join(KINDS)}, not {kind!r}.", code="malformed")
    seat = cmd.seat_of(user)
    if seat is None:
        raise NotSeated("You are not seated at this table.")
    if wanted:
        refusal = blind_option_refusal(
            stake=cmd.table.stake_level, seat=seat, kind=kind, outlook=_outlook(cmd)
        )
        if refusal is not None:
            raise refusal
    if _wants(seat, kind) == wanted:
        return seat
    field = "wants_straddle" if kind == STRADDLE else "wants_overblind"
    setattr(seat, field, wanted)
    cmd.save_seat(seat, field)
    cmd.emit(BlindOptionAsked(seat=seat.number, kind=kind, wanted=wanted))
    blind_options_note(cmd, only=seat)
    return seat


def _outlook(cmd: TableCommand) -> NextHand:
    return next_hand_outlook(
        table=cmd.table, seats=cmd.seats, in_hand=cmd.hand is not None, finished=cmd.finished
    )


def blind_options_of(
    *, stake: StakeLevel, seat: Seat, outlook: NextHand
) -> dict[str, dict[str, Any]] | None:
    """What one seated player is shown: for each option the stake level allows, whether
    it is `open` to them now, whether they `asked` for it, its `amount`, and the
    `reason` it is not open (None when it is). None when the stake allows neither."""
    options = {}
    for kind in KINDS:
        if not blind_option_allowed(stake=stake, kind=kind):
            continue
        refusal = blind_option_refusal(stake=stake, seat=seat, kind=kind, outlook=outlook)
        options[kind] = {
            "open": refusal is None,
            "asked": _wants(seat, kind),
            "amount": 2 * stake.big_blind,
            "reason": None if refusal is None else refusal.message,
        }
    return options or None


def seats_announce(cmd: TableCommand, *, only: Seat | None = None) -> None:
    """Tell the table how its seats stand now. Who sits where, and with how many chips,
    decides who may straddle next hand: each player's (or `only` one's) options follow."""
    cmd.emit(SeatsChanged(seats=seats_public(cmd.seats)))
    blind_options_note(cmd, only=only)


def blind_options_note(cmd: TableCommand, *, only: Seat | None = None) -> None:
    """Tell each seated player (or `only` one) privately, with the last message, which
    options are open to them for the next hand. Nothing when the stake allows neither."""
    stake = cmd.table.stake_level
    if not (blind_option_allowed(stake=stake, kind=STRADDLE) or stake.allow_overblind):
        return
    outlook = _outlook(cmd)
    for seat in cmd.seats if only is None else [only]:
        options = blind_options_of(stake=stake, seat=seat, outlook=outlook)
        if options is not None:
            cmd.note(user_id=seat.player_id, note=BlindOptionsNote(blind_options=options))


def blind_requests_answer(cmd: TableCommand) -> None:
    """At the deal: tell every player who asked whether their request was posted, and
    why not, and clear every request (each is for the next hand dealt only)."""
    for seat in cmd.seats:
        answers = []
        for kind in KINDS:
            if not _wants(seat, kind):
                continue
            posted, message = _request_outcome(cmd, seat=seat, kind=kind)
            answers.append({"kind": kind, "posted": posted, "message": message})
        if not answers:
            continue
        seat.wants_straddle = seat.wants_overblind = False
        cmd.save_seat(seat, "wants_straddle", "wants_overblind")
        cmd.note(user_id=seat.player_id, note=BlindRequestsNote(blind_requests=answers))


def _request_outcome(cmd: TableCommand, *, seat: Seat, kind: str) -> tuple[bool, str]:
    """Whether the engine posted this seat's request in the hand just dealt, and what to
    tell the player (in the order the deal decides: rules first, then the seat, then
    the chips)."""
    stake, state = cmd.table.stake_level, cmd.state
    name = NAMES[kind]
    amount = dollars(2 * stake.big_blind)
    seats = state.seats
    index = seats.index(seat.number) if seat.number in seats else None
    poster = state.straddler if kind == STRADDLE else state.overblinder
    if index is not None and poster == index:
        if kind == STRADDLE:
            return True, f"You posted a straddle of {amount}: you act last before the flop."
        return True, (
            f"You posted an overblind of {amount}: the limits of this hand are doubled and "
            "you act last before the flop."
        )
    refused = f"Your {kind} was not posted"
    if not blind_option_allowed(stake=stake, kind=kind):
        return False, f"{refused}: this stake level no longer allows {name}."
    if index is None:
        return False, f"{refused}: you were not dealt into this hand."
    if state.kill is not None:
        return False, f"{refused}: this is a kill hand, which takes no {kind}."
    if kind == STRADDLE and state.overblinder is not None:
        other = seats[state.overblinder]
        return False, (
            f"{refused}: seat {other} posted an overblind, and an overblind hand takes no straddle."
        )
    stack = state.starting_stacks[index]
    covers = stack >= blind_option_cost(stake=stake)
    if kind == OVERBLIND and covers and state.overblinder is not None:
        # The engine passes over an asker who cannot cover it: then that is the reason.
        other = seats[state.overblinder]
        return False, (
            f"{refused}: one overblind per hand, and seat {other} asked too, first from the "
            "button's left."
        )
    left_of_big = straddle_seat(state.button, seats)
    if kind == STRADDLE and left_of_big is None:
        return False, f"{refused}: a straddle needs three or more players dealt in."
    if kind == STRADDLE and left_of_big != seat.number:
        return False, (
            f"{refused}: the straddle is for the player left of the big blind, seat "
            f"{left_of_big} in this hand."
        )
    return False, f"{refused}: {_cannot_cover(stake=stake, kind=kind, stack=stack)}"
