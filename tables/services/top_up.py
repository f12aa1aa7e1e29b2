"""Auto top-up: a player's standing order to bring their stack back to the maximum buy-in
between hands, after every hand (`max`) or whenever it is below N big blinds (`below`).

It is carried out through the cashier like any top-up (RULES §4: between hands, never
above the maximum): after each hand the player was dealt into, before a busted stack
would sit them out, and at once when the order is given between hands. The wallet pays
what it can: with less than the whole top-up in it, the stack gets what there is; with
nothing, nothing (the player is told which, privately). A top-up the cashier refuses
(the wallet emptied by a withdrawal in the same instant, say), or one whose wallet stays
locked past the lock timeout, is skipped and told, and never fails the hand's settling.
"""

import uuid

from django.db import OperationalError, transaction

from accounts.models import User
from accounts.selectors import user_can_play
from cashier import services as cashier
from cashier.exceptions import CashierError
from cashier.selectors import wallet_balance
from tables.exceptions import TableError
from tables.ledger import table_account_ensure
from tables.messages import AutoTopUpNote
from tables.models import AutoTopUp, PlayerSettings, Seat, StakeLevel
from tables.services.blind_options import seats_announce
from tables.services.command import (
    TableCommand,
    Unchanged,
    lock_not_available,
    table_command,
    unchanged_before_lock,
)

# The most big blinds `below` can name (far above any maximum buy-in).
BELOW_MAX = 1000


def auto_top_up_due(*, settings: PlayerSettings, seat: Seat, stake: StakeLevel) -> int:
    """How much the order asks for now (0: nothing)."""
    room = stake.buy_in_max - seat.stack
    if room <= 0 or settings.auto_top_up == AutoTopUp.OFF:
        return 0
    if settings.auto_top_up == AutoTopUp.BELOW:
        return room if seat.stack < settings.auto_top_up_below * stake.big_blind else 0
    return room


def auto_top_up_run(
    cmd: TableCommand, seat: Seat, *, settings: PlayerSettings
) -> AutoTopUpNote | None:
    """Carry the seat's order out now (the seat is not in a hand); returns what to tell
    its player (None: nothing was due), for the caller to add to the seat list it sends."""
    due = auto_top_up_due(settings=settings, seat=seat, stake=cmd.table.stake_level)
    # As `seat_top_up`: an account made staff while seated moves no money to the table.
    if due == 0 or not user_can_play(user=seat.player):
        return None
    amount = min(due, wallet_balance(user=seat.player))
    added = 0
    if amount > 0:
        try:
            # A savepoint: a lock not granted in time (below) fails its statement, which
            # must leave the command's transaction usable (a refusal writes nothing).
            with transaction.atomic():
                cashier.table_top_up(
                    user=seat.player,
                    account=table_account_ensure(table=cmd.table),
                    amount=amount,
                    idempotency_key=f"auto-top-up:seat:{seat.id}:{uuid.uuid4().hex}",
                )
            added = amount
        except CashierError:
            added = 0
        except OperationalError as exc:
            # The wallet's lock held past the lock timeout (a stuck movement of theirs):
            # the top-up is skipped like a refused one, not the hand's settling with it.
            if not lock_not_available(exc):
                raise
            added = 0
    if added:
        seat.stack += added
        cmd.save_seat(seat, "stack")
    return AutoTopUpNote(auto_top_up={"added": added, "due": due})


def auto_top_up_after_hand(cmd: TableCommand, seats: list[Seat]) -> dict[int, AutoTopUpNote]:
    """The orders of the players just dealt a hand (read with the table's lock), carried
    out as it is settled; user id -> what to tell them."""
    orders = cmd.top_up_orders
    notes = {}
    for seat in seats:
        if seat.player_id in orders and not seat.leave_after_hand:
            note = auto_top_up_run(cmd, seat, settings=orders[seat.player_id])
            if note is not None:
                notes[seat.player_id] = note
    return notes


def _order_as_asked(mode: str, big_blinds: int | None) -> tuple[str, int]:
    return mode, big_blinds if mode == AutoTopUp.BELOW and big_blinds is not None else 0


def _order_of(settings: PlayerSettings | None) -> tuple[str, int]:
    if settings is None:  # nobody gave one: off
        return AutoTopUp.OFF, 0
    return settings.auto_top_up, settings.auto_top_up_below


def _order_unchanged_elsewhere(
    *, table_id: int, user: User, mode: str, big_blinds: int | None = None
) -> Unchanged[PlayerSettings] | None:
    """The order the player has already, given from a table they do not sit at (where
    nothing is due): nothing changes, answered without the table's lock (read before
    it). A player seated there goes on: the order may be due now."""
    settings = PlayerSettings.objects.filter(user=user).first()
    if _order_of(settings) != _order_as_asked(mode, big_blinds):
        return None
    if Seat.objects.filter(table_id=table_id, player=user).exists():
        return None
    return Unchanged(settings or PlayerSettings(user=user))


@unchanged_before_lock(_order_unchanged_elsewhere)
@table_command
def auto_top_up_set(
    cmd: TableCommand, *, user: User, mode: str, big_blinds: int | None = None
) -> PlayerSettings:
    """Give (or with `off`, cancel) the order; carried out at once when between hands.

    The order given again is not written again. Seated here between hands, it runs
    (the wallet may have been funded since, and the player is told what it added, if
    anything was due); anywhere else it changes nothing, publishes nothing and takes
    no lock (`_order_unchanged_elsewhere`)."""
    if mode not in AutoTopUp.values:
        raise TableError(
            f"Auto top-up is one of {', '.join(AutoTopUp.values)}, not {mode!r}.",
            code="malformed",
        )
    if mode == AutoTopUp.BELOW and (big_blinds is None or not 1 <= big_blinds <= BELOW_MAX):
        raise TableError(
            f"Say below how many big blinds (1 to {BELOW_MAX}) to top up.", code="bad_amount"
        )
    order = _order_as_asked(mode, big_blinds)
    settings = PlayerSettings.objects.filter(user=user).first()
    changed = _order_of(settings) != order
    if changed:
        # One row per player, whatever table the order comes from: two first orders at
        # once (two tables, two locks) must not both insert it.
        settings, _ = PlayerSettings.objects.update_or_create(
            user=user, defaults={"auto_top_up": order[0], "auto_top_up_below": order[1]}
        )
    elif settings is None:  # "off", never given: nothing to write
        settings = PlayerSettings(user=user)
    seat = cmd.seat_of(user)
    if seat is None or cmd.dealt_in(seat) or seat.leave_after_hand:
        return settings
    note = auto_top_up_run(cmd, seat, settings=settings)
    if note is not None:
        seats_announce(cmd, only=seat)
        cmd.note(user_id=seat.player_id, note=note)
    return settings
