"""Starting a hand: :class:`SeatEntry`, :func:`verify_start`, :func:`can_start`, :func:`start_hand`.

``start_hand`` verifies the set-up (``verify_start`` raises the precise
:class:`~tables.engine.errors.SetupError` or :class:`~tables.engine.errors.ConfigError`),
then, in order (RULES.md section 3 steps 1-6 and section 7):

1. decides the hand's special bets: a kill (the previous hand's scooper, still dealt in),
   else an overblind (the first asking from the button's left, finer point 6), else a
   straddle (the player left of the big blind, three or more dealt in); each needs the
   chips to post it in full, and the kill and overblind raise the hand's limits;
2. posts the forced bets: antes (dead) clockwise from the small blind, the blinds, the
   newcomers' big blinds, then the special bet (all live);
3. deals the hole cards one at a time clockwise from the small blind;
4. sets up the preflop round: first to act is left of the big blind (of the straddle),
   the killer (with ``killer_acts_last``) or the overblinder acts last.

If the posts put everyone all-in the hand runs out at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from tables.engine import errors
from tables.engine.betting import Limits, Street
from tables.engine.config import KillInfo, KillMode, Structure, TableConfig
from tables.engine.events import Event, HandStarted, HoleCards, Posted, SeatInfo
from tables.engine.hand_state import HandState, PlayerStatus
from tables.engine.positions import clockwise_order
from tables.engine.rounds import close_round, lone_actor


@dataclass(frozen=True, slots=True)
class SeatEntry:
    """A player dealt in to the hand, with their choices for it.

    ``posts_big_blind``: a newcomer posting a live big blind out of position (not allowed
    from the small-blind or button seat, finer point 16). ``straddle``/``overblind``: asks
    to post one (honoured when the table allows it and the seat qualifies). ``chop``: the
    "chop blinds" preference. ``auto_muck``: "auto-muck losing hands" (RULES.md section 3).
    ``player`` is the name shown; ``player_id`` the player's stable id in the room (a
    screen name can be changed and taken by someone else; the id cannot).
    """

    seat: int
    player: str
    stack: int
    posts_big_blind: bool = False
    straddle: bool = False
    overblind: bool = False
    chop: bool = False
    auto_muck: bool = True
    player_id: int | None = None


class _ForcedBet(NamedTuple):
    """A bet posted before the cards: player index, kind (the Posted event's word),
    nominal amount, and whether it is live (counts toward the call) or dead (antes)."""

    player: int
    kind: str
    amount: int
    live: bool


def blind_indices(button: int, n: int) -> tuple[int, int]:
    """``(small_blind, big_blind)`` player indices for the button's index among ``n``
    (heads-up the button posts the small blind)."""
    if n == 2:
        return button, (button + 1) % n
    return (button + 1) % n, (button + 2) % n


def verify_start(
    config: TableConfig, seats: Sequence[SeatEntry], *, button: int, deck: Sequence[int]
) -> list[SeatEntry]:
    """Raise the ConfigError or SetupError that ``start_hand`` would; else return the
    entries in seat order."""
    table_limits(config)  # validates the configuration
    n = len(seats)
    if not 2 <= n <= 10:
        raise errors.SetupError(f"A hand needs 2 to 10 players dealt in, not {n}.")
    entries = sorted(seats, key=lambda entry: entry.seat)
    numbers = [entry.seat for entry in entries]
    if len(set(numbers)) != n:
        raise errors.SetupError("A seat is dealt in twice.")
    if min(entry.stack for entry in entries) <= 0:
        raise errors.SetupError("Every player dealt in needs chips.")
    if button not in numbers:
        raise errors.SetupError(f"The button seat {button} is not dealt in.")
    if set(deck) != _FULL_DECK or len(deck) != 52:
        raise errors.SetupError("The deck must hold each of the 52 cards once.")
    b = numbers.index(button)
    small_blind, _ = blind_indices(b, n)
    for j in (small_blind, b):
        if entries[j].posts_big_blind:
            raise errors.SetupError(
                f"Seat {numbers[j]} cannot post a newcomer big blind from the "
                "small-blind or button seat; it waits until the button passes (finer point 16)."
            )
    return entries


_FULL_DECK = frozenset(range(52))


def can_start(
    config: TableConfig, seats: Sequence[SeatEntry], *, button: int, deck: Sequence[int]
) -> bool:
    """True when ``start_hand`` would accept this set-up."""
    try:
        verify_start(config, seats, button=button, deck=deck)
    except (errors.SetupError, errors.ConfigError):
        return False
    return True


@lru_cache(maxsize=64)
def table_limits(config: TableConfig) -> Limits:
    """The limits of an ordinary hand of ``config``, after ``config.validate()`` (whose
    ConfigError it raises). Remembered for the few configurations in use: a table, a
    replay or a simulation plays many hands with one."""
    config.validate()
    return Limits.for_hand(config)


def start_hand(
    config: TableConfig,
    seats: Sequence[SeatEntry],
    *,
    button: int,
    deck: Sequence[int],
    hand_id: str = "",
    kill: KillInfo | None = None,
    deck_commitment: str | None = None,
) -> tuple[HandState, list[Event]]:
    """Post the forced bets, deal the hole cards and return the state and its events.

    ``seats`` are the players dealt in (any order); ``button`` one of their seats;
    ``deck`` the full 52-card order (dealt from index 0). ``kill`` is the previous hand's
    ``result.next_kill`` when the killer is still dealt in (ignored when the table plays
    no kills or the killer is not dealt in).
    """
    entries = verify_start(config, seats, button=button, deck=deck)
    n = len(entries)
    numbers = tuple(entry.seat for entry in entries)
    b = numbers.index(button)
    sb, bb = blind_indices(b, n)
    big_blind = config.big_blind
    full_special = config.ante + 2 * big_blind  # what a straddle or overblind needs

    # 1. The special bets and the limits they bring.
    killer: int | None = None
    kill_in_force: KillInfo | None = None
    if kill is not None and config.kill is not KillMode.NONE and kill.seat in numbers:
        killer = numbers.index(kill.seat)
        kill_in_force = KillInfo(seat=kill.seat, multiplier=kill.multiplier)
    overblinder: int | None = None
    if config.allow_overblind and killer is None:
        overblinder = next(
            (
                j
                for j in clockwise_order((b + 1) % n, n)
                if entries[j].overblind and entries[j].stack >= full_special
            ),
            None,
        )
    straddler: int | None = None
    if config.allow_straddle and killer is None and overblinder is None and n >= 3:
        j = (bb + 1) % n
        if entries[j].straddle and entries[j].stack >= full_special:
            straddler = j
    if kill_in_force is not None:
        scale = kill_in_force.multiplier
    else:
        scale = KillMode.FULL if overblinder is not None else KillMode.NONE
    limits = table_limits(config) if scale is KillMode.NONE else Limits.for_hand(config, scale)

    events: list[Event] = [
        HandStarted(
            hand_id=hand_id,
            button=button,
            game=str(config.game),
            structure=str(config.structure),
            seats=tuple(
                SeatInfo(seat=e.seat, player=e.player, stack=e.stack, player_id=e.player_id)
                for e in entries
            ),
            small_blind=config.small_blind,
            big_blind=big_blind,
            ante=config.ante,
            small_bet=limits.small_bet,
            big_bet=limits.big_bet,
            spread_min=limits.spread_min,
            spread_max=limits.spread_max,
            limit_multiplier=limits.multiplier,
            kill=kill_in_force,
            overblind_seat=None if overblinder is None else numbers[overblinder],
            straddle_seat=None if straddler is None else numbers[straddler],
            deck_commitment=deck_commitment,
        )
    ]

    # 2. The forced bets, in posting order.
    deal_order = clockwise_order(sb, n)
    forced = [_ForcedBet(j, "ante", config.ante, live=False) for j in deal_order if config.ante]
    special: _ForcedBet | None = None
    if killer is not None:
        kill_blind = limits.small_bet if config.structure is Structure.FL else limits.spread_min
        special = _ForcedBet(killer, "kill_blind", kill_blind, live=True)
    elif overblinder is not None:
        special = _ForcedBet(overblinder, "overblind", 2 * big_blind, live=True)
    elif straddler is not None:
        special = _ForcedBet(straddler, "straddle", 2 * big_blind, live=True)
    special_player = None if special is None else special.player
    # Preflop every player must reach the largest nominal live bet, even if its poster
    # was short (finer point 17); a small blind above the big blind counts as the big.
    nominal = [0]
    if sb != special_player:
        forced.append(_ForcedBet(sb, "small_blind", config.small_blind, live=True))
        nominal.append(min(config.small_blind, big_blind))
    if bb != special_player:
        forced.append(_ForcedBet(bb, "big_blind", big_blind, live=True))
        nominal.append(big_blind)
    newcomers = [
        j
        for j in deal_order
        if entries[j].posts_big_blind and j not in (sb, bb) and j != special_player
    ]
    for j in newcomers:
        forced.append(_ForcedBet(j, "newcomer_big_blind", big_blind, live=True))
        nominal.append(big_blind)
    if special is not None:
        forced.append(special)
        nominal.append(special.amount)

    stacks = [entry.stack for entry in entries]
    committed = [0] * n
    contributed = [0] * n
    antes = [0] * n
    status = [PlayerStatus.IN] * n
    blind_shortfall = 0
    # The amount to match as the posts go in: the blinds in full, short or not.
    posted_to = 0
    for player, kind, amount, live in forced:
        if live:
            posted_to = max(posted_to, min(amount, big_blind) if kind == "small_blind" else amount)
        paid = min(amount, stacks[player])
        if live and paid < amount:  # a blind posted all-in for less (finer points 17-18)
            blind_shortfall += amount - paid
        if paid <= 0:  # all-in from the ante already
            continue
        stacks[player] -= paid
        contributed[player] += paid
        if live:
            committed[player] += paid
        else:
            antes[player] += paid
        all_in = stacks[player] == 0
        if all_in:
            status[player] = PlayerStatus.ALL_IN
        events.append(
            Posted(
                seat=numbers[player],
                kind=kind,
                amount=paid,
                all_in=all_in,
                stack=stacks[player],
                committed=committed[player],
                in_pot=contributed[player],
                to_match=posted_to,
                pot_total=sum(contributed),
            )
        )

    # 3. Hole cards: one at a time clockwise from the small blind, so the player in deal
    # position p gets the deck's cards p, p + n, p + 2n, ... (a slice with step n).
    cards = tuple(deck)
    dealt = config.game.hole_cards * n
    hole_by_player: dict[int, tuple[int, ...]] = {}
    for p, j in enumerate(deal_order):
        hole_by_player[j] = cards[p:dealt:n]
        events.append(HoleCards(seat=numbers[j], cards=hole_by_player[j]))

    # 4. The preflop round.
    first = ((straddler if straddler is not None else bb) + 1) % n
    order = clockwise_order(first, n)
    last = killer if (killer is not None and config.killer_acts_last) else overblinder
    if last is not None:
        order.remove(last)
        order.append(last)
    if config.structure in (Structure.PL, Structure.NL):
        last_raise = max(big_blind, max(nominal))  # finer point 4: a straddle is a bigger BB
    elif config.structure is Structure.SL:
        last_raise = max(nominal) - big_blind if straddler is not None else max(nominal)
    else:
        last_raise = limits.small_bet
    chop_possible = (
        config.allow_chop
        and n >= 3
        and entries[sb].chop
        and entries[bb].chop
        and special is None
        and not newcomers
    )
    state = HandState(
        config=config,
        hand_id=hand_id,
        button=button,
        seats=numbers,
        players=tuple(entry.player for entry in entries),
        player_ids=tuple(entry.player_id for entry in entries),
        starting_stacks=tuple(entry.stack for entry in entries),
        auto_muck=tuple(entry.auto_muck for entry in entries),
        hole=tuple(hole_by_player[j] for j in range(n)),
        deck=cards,
        deck_commitment=deck_commitment,
        limits=limits,
        small_blind_index=sb,
        big_blind_index=bb,
        straddler=straddler,
        killer=killer,
        kill=kill_in_force,
        overblinder=overblinder,
        chop_possible=chop_possible,
        street=Street.PREFLOP,
        board=[],
        stacks=stacks,
        status=status,
        committed=committed,
        contributed=contributed,
        antes=antes,
        acted=[False] * n,
        shown=[False] * n,
        # Only those who can act: the posts may have put some all-in.
        order=tuple(j for j in order if status[j] is PlayerStatus.IN),
        actor_index=None,
        to_match=max(nominal),
        last_raise=last_raise,
        full_bets=2 if straddler is not None else 1,
        aggressor=None,
        runout=False,
        over=False,
        result=None,
        blind_shortfall=blind_shortfall,
    )
    # Nobody has acted yet: the first in order opens, when someone else can act too.
    state.actor_index = state.order[0] if len(state.order) > 1 else lone_actor(state)
    if state.actor_index is None:  # everyone is all-in from the posts
        close_round(state, events)
    return state, events
