"""Build and drive a pokerkit ``State`` that plays by our table configuration.

pokerkit is the independent implementation the differential tests and the benchmark
compare our engine with. Its presets do not all match RULES.md, so the state is built
from pokerkit's generic parts (``State`` with our streets, hand types and betting
structure) instead:

* **Limit cap.** pokerkit counts bets/raises made *after* the blinds, so the preflop
  street allows 3 of them: with the big blind counted as the first bet that is RULES.md's
  4-bet cap. (pokerkit's ``FO/8`` preset even plays pot limit; we never use the presets.)
* **No burn cards** (the engine deals none) and the cards are dealt explicitly, from the
  same deck the engine used.
* **Rake.** :class:`RulesRakeState` replaces pokerkit's per-pot rake (round half to even,
  cap per pot) with RULES.md section 6: once per hand on the total of the pots, rounded
  down, capped per hand, taken from the main pot first. It only re-splits each pot into
  raked and unraked parts; pokerkit's own pot building and awards are untouched.
* **Players.** pokerkit's player ``k`` is the ``k``-th player clockwise from the button's
  left (heads-up: the big blind first), the same numbering as our PHH export
  (:func:`phh_order`).

Differences that cannot be configured away are listed in ``test_differential.py``.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

from pokerkit import (
    Automation,
    BettingStructure,
    Deck,
    HandHistory,
    Mode,
    OmahaEightOrBetterLowHand,
    OmahaHoldemHand,
    Opening,
    Pot,
    StandardHighHand,
    State,
    Street,
)
from pokerkit.games import (
    FixedLimitPokerMixin,
    Holdem,
    NoLimitPokerMixin,
    OmahaHoldemMixin,
    PotLimitPokerMixin,
    TexasHoldemMixin,
    UnfixedLimitHoldem,
)

from tables.engine.cards import cards_str
from tables.engine.config import Game, Structure, TableConfig
from tables.engine.evaluator import low_value
from tables.engine.events import Event, Won
from tables.engine.state import HandState

AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.RUNOUT_COUNT_SELECTION,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)
_HAND_TYPES: dict[Game, tuple[type[Any], ...]] = {
    Game.HOLDEM: (StandardHighHand,),
    Game.OMAHA: (OmahaHoldemHand,),
    Game.OMAHA8: (OmahaHoldemHand, OmahaEightOrBetterLowHand),
}
_STRUCTURES = {
    Structure.FL: BettingStructure.FIXED_LIMIT,
    Structure.PL: BettingStructure.POT_LIMIT,
    Structure.NL: BettingStructure.NO_LIMIT,
}


class RulesRakeState(State):
    """A pokerkit state raking by RULES.md section 6 (see the module docstring).

    ``rules_rake`` is ``(basis_points, cap or None, no_flop_no_drop)``; pokerkit's own
    rake function must be the default zero rake.
    """

    rules_rake: tuple[int, int | None, bool] = (0, None, False)

    @property
    def pots(self) -> Iterator[Pot]:
        """pokerkit's pots with the hand's rake taken main pot first."""
        if self._pots is not None:  # frozen at the start of chips pushing: already raked
            yield from self._pots
            return
        pots = list(State.pots.fget(self))  # type: ignore[attr-defined]
        basis_points, cap, no_flop_no_drop = self.rules_rake
        # The hand's total after the uncalled bet is returned. Not the sum of ``pots``:
        # when everyone folds pokerkit leaves the winner's last bets out of its pots.
        put_in = sorted((-payoff for payoff in self.payoffs), reverse=True)
        total = sum(put_in) - (put_in[0] - put_in[1])
        flop_seen = sum(len(cards) for cards in self.board_cards) >= 3
        rake = 0 if (no_flop_no_drop and not flop_seen) else total * basis_points // 10_000
        if cap is not None:
            rake = min(rake, cap)
        for pot in pots:
            taken = min(rake, pot.amount)
            rake -= taken
            yield Pot(taken, pot.amount - taken, pot.player_indices)


def phh_order(state: HandState) -> list[int]:
    """Engine player indices in pokerkit/PHH order (clockwise from the button's left)."""
    n = len(state.seats)
    b = state.seats.index(state.button)
    return [(b + 1 + k) % n for k in range(n)]


def streets(config: TableConfig, *, straddle: bool = False) -> tuple[Street, ...]:
    """Preflop, flop, turn and river of ``config`` in pokerkit's terms (no burn).

    With a straddle: in limit it is the second preflop bet (finer point 3), one raise
    fewer; in pot and no limit it sets the smallest preflop raise.
    """
    structure = config.structure
    if structure is Structure.SL:
        raise ValueError("pokerkit has no spread limit")
    holes = (False,) * config.game.hole_cards
    if structure is Structure.FL:
        early, late = config.small_bet, config.big_bet
        caps: tuple[int | None, ...] = (2 if straddle else 3, 4, 4, 4)  # BB is bet 1
    else:
        early = config.big_blind
        late = config.big_bet if config.min_bet_doubles_late else config.big_blind
        caps = (None,) * 4
    # Finer point 4: in pot and no limit the straddle is a bigger big blind, so the
    # smallest preflop raise is the straddle itself.
    preflop = 2 * early if straddle and not structure.is_limit else early
    return (
        Street(False, holes, 0, False, Opening.POSITION, preflop, caps[0]),
        Street(False, (), 3, False, Opening.POSITION, early, caps[1]),
        Street(False, (), 1, False, Opening.POSITION, late, caps[2]),
        Street(False, (), 1, False, Opening.POSITION, late, caps[3]),
    )


def blinds(config: TableConfig, n: int, *, straddle: bool = False) -> list[int]:
    """``blinds_or_straddles`` in pokerkit order (heads-up ``[small, big]``)."""
    out = [0] * n
    out[0], out[1] = config.small_blind, config.big_blind
    if straddle:
        out[2] = 2 * config.big_blind
    return out


def new_state(
    config: TableConfig,
    stacks: Sequence[int],
    *,
    rake: bool = False,
    straddle: bool = False,
) -> RulesRakeState:
    """A pokerkit state for ``config`` with ``stacks`` in pokerkit order.

    ``rake``: take RULES.md's rake (``config``'s percentage, cap and no-flop-no-drop);
    otherwise no rake at all. With ``config.run_it_twice`` the players select the
    runout count themselves (``select_runout_count``), else pokerkit runs once.
    """
    n = len(stacks)
    automations = AUTOMATIONS
    if config.run_it_twice:
        automations = tuple(a for a in AUTOMATIONS if a is not Automation.RUNOUT_COUNT_SELECTION)
    state = RulesRakeState(
        automations,
        Deck.STANDARD,
        _HAND_TYPES[config.game],
        streets(config, straddle=straddle),
        _STRUCTURES[config.structure],
        True,  # antes: collected like bets, so an all-in for less wins only what it matched
        config.ante,
        blinds(config, n, straddle=straddle),
        0,
        list(stacks),
        n,
        mode=Mode.CASH_GAME,
    )
    if rake:
        state.rules_rake = (config.rake_percent, config.rake_cap(n), config.no_flop_no_drop)
    return state


def start_like(ours: HandState, *, rake: bool = False) -> RulesRakeState:
    """A pokerkit state for the hand ``ours`` just started, hole cards dealt."""
    order = phh_order(ours)
    pk = new_state(
        ours.config,
        [ours.starting_stacks[i] for i in order],
        rake=rake,
        straddle=ours.straddler is not None,
    )
    for k, i in enumerate(order):
        pk.deal_hole(cards_str(ours.hole[i]), k)
    return pk


def board_of(ours: HandState, *, runs: int = 1) -> list[int]:
    """The board cards the engine deals (or would deal) in this hand, in dealing order:
    five, then (``runs=2``) the cards a second run may take after them."""
    start = len(ours.seats) * ours.config.game.hole_cards
    return list(ours.deck[start : start + 5 * runs])


def deal_due_board(pk: State, board: Sequence[int]) -> None:
    """Deal pokerkit's board cards as far as it asks for them, from ``board``."""
    while pk.status and pk.can_deal_board():
        dealt = sum(len(cards) for cards in pk.board_cards)
        count = pk.street.board_dealing_count
        pk.deal_board(cards_str(board[dealt : dealt + count]))


def play(pk: State, kind: str, to: int | None = None) -> None:
    """Mirror one of our actions ("fold", "check", "call", "bet_raise") into pokerkit."""
    if kind == "fold":
        pk.fold()
    elif kind in ("check", "call"):
        pk.check_or_call()
    elif kind == "bet_raise":
        pk.complete_bet_or_raise_to(to)
    else:
        raise ValueError(f"pokerkit has no {kind!r}")


def odd_chip_groups(events: Sequence[Event]) -> list[set[int]]:
    """Seats among which the engine split a pot with cents left over (merged when they
    overlap). pokerkit places those cents differently (see ``test_differential``), so
    only each group's total can be compared. A pot run twice counts as split between
    the winners of both runs."""
    by_pot: dict[int, list[Won]] = {}
    for e in events:
        if isinstance(e, Won):
            by_pot.setdefault(e.pot, []).append(e)
    groups: list[set[int]] = []
    for won in by_pot.values():
        odd = False
        runs = {w.run for w in won}
        for run in runs:
            of_run = [w for w in won if w.run == run]
            parts = Counter(w.share for w in of_run)
            shares = {share: sum(w.amount for w in of_run if w.share == share) for share in parts}
            odd = odd or any(shares[share] % count for share, count in parts.items())
            if "low" in parts and sum(shares.values()) % 2:
                odd = True  # the hi-lo odd chip: where it goes depends on the pot boundaries
        if len(runs) > 1 and sum(w.amount for w in won) % 2:
            odd = True  # the odd chip between the runs: the same
        if odd:
            group = {w.seat for w in won}
            for other in [g for g in groups if g & group]:
                groups.remove(other)
                group |= other
            groups.append(group)
    return groups


def lowless_side_pot(ours: HandState) -> bool:
    """A hi-lo showdown where some hand has a low but some pot's contenders have none
    (pokerkit splits such a pot anyway; see ``test_differential``)."""
    result = ours.result
    if not ours.config.game.hi_lo or result is None or len(ours.board) < 5:
        return False
    live = [i for i, s in enumerate(ours.status) if s != "folded"]
    if len(live) < 2:
        return False
    boards = [ours.board]
    if ours.run_twice is not None and ours.run_twice.runs == 2:
        boards.append(list(ours.run_twice.second_board))  # each board on its own
    for board in boards:
        lows = {ours.seats[i]: low_value(ours.hole[i], board) for i in live}
        if any(v is not None for v in lows.values()) and any(
            all(lows[s] is None for s in pot.eligible) for pot in result.pots
        ):
            return True
    return False


# -- PHH ---------------------------------------------------------------------------------
# pokerkit reads the variant codes FT, NT, PO and FO/8; these are the rest of ours.


class FixedLimitOmaha(FixedLimitPokerMixin, OmahaHoldemMixin, Holdem):
    """FO: fixed-limit Omaha high."""

    hand_types = (OmahaHoldemHand,)


class NoLimitOmaha(NoLimitPokerMixin, OmahaHoldemMixin, UnfixedLimitHoldem):
    """NO: no-limit Omaha high."""

    hand_types = (OmahaHoldemHand,)


class PotLimitHoldem(PotLimitPokerMixin, TexasHoldemMixin, UnfixedLimitHoldem):
    """PT: pot-limit Texas hold'em."""


class PotLimitOmahaHiLo(PotLimitPokerMixin, OmahaHoldemMixin, UnfixedLimitHoldem):
    """PO/8: pot-limit Omaha hi-lo 8 or better."""

    hand_types = (OmahaHoldemHand, OmahaEightOrBetterLowHand)


class NoLimitOmahaHiLo(NoLimitPokerMixin, OmahaHoldemMixin, UnfixedLimitHoldem):
    """NO/8: no-limit Omaha hi-lo 8 or better."""

    hand_types = (OmahaHoldemHand, OmahaEightOrBetterLowHand)


_EXTRA_VARIANTS: dict[str, type[Any]] = {
    "FO": FixedLimitOmaha,
    "NO": NoLimitOmaha,
    "PT": PotLimitHoldem,
    "PO/8": PotLimitOmahaHiLo,
    "NO/8": NoLimitOmahaHiLo,
}


def assert_phh_replays(state: HandState, events: Sequence[Event], text: str) -> None:
    """pokerkit plays the PHH ``text`` of the hand ``state`` (its ``events``) to the end
    and to the engine's finishing stacks, the odd chips compared as ``odd_chip_groups``
    says (the caller skips the hands of :func:`lowless_side_pot`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pokerkit warns about our PHH user fields
        final = list(RoomHandHistory.loads(text))[-1]
    assert not final.status, f"pokerkit did not finish the hand:\n{text}"
    order = phh_order(state)
    ours = {state.seats[i]: state.stacks[i] for i in order}
    theirs = {state.seats[i]: final.stacks[k] for k, i in enumerate(order)}
    for group in odd_chip_groups(events):
        assert sum(ours.pop(s) for s in group) == sum(theirs.pop(s) for s in group), text
    assert ours == theirs, text


class RoomHandHistory(HandHistory):
    """pokerkit's ``HandHistory`` reading all our variant codes and raking by the file's
    ``_rake_*`` fields the RULES.md way (:class:`RulesRakeState`)."""

    game_types = {**HandHistory.game_types, **_EXTRA_VARIANTS}
    required_field_names = {
        **HandHistory.required_field_names,
        **{
            code: HandHistory.required_field_names["FT" if code == "FO" else "NT"]
            for code in _EXTRA_VARIANTS
        },
    }

    def create_state(self) -> State:
        """The initial state, a :class:`RulesRakeState` with the file's rake."""
        game = self.create_game()
        state = RulesRakeState(
            game.automations,
            game.deck,
            game.hand_types,
            game.streets,
            game.betting_structure,
            game.ante_trimming_status,
            game.raw_antes,
            game.raw_blinds_or_straddles,
            game.bring_in,
            self.starting_stacks,
            len(self.starting_stacks),
            mode=game.mode,
            starting_board_count=game.starting_board_count,
            divmod=game.divmod,
            rake=game.rake,
        )
        extra = self.user_defined_fields
        fraction = Decimal(str(extra.get("_rake_percentage", 0)))
        state.rules_rake = (
            int(fraction * 10_000),
            extra.get("_rake_cap"),
            bool(extra.get("_rake_no_flop_no_drop", False)),
        )
        return state
