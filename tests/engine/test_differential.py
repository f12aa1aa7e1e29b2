"""Differential tests: our hand engine against pokerkit, hand by hand.

Both engines play the same random hands: same seats and stacks (short stacks are
common, so side pots are too), the same deck, and the same actions. Our engine picks a
random legal action, pokerkit must accept it, and before every decision the options
offered are compared (whose turn, check or call amount, raise bounds). At the end every
finishing stack must agree exactly. pokerkit is configured to RULES.md where it can be
(see ``pokerkit_adapter``: 4-bet limit cap counting the big blind, fixed-limit Omaha
hi-lo, no burn cards, RULES.md rake once per hand); half the hands are raked.

Known differences that configuration cannot remove, and how the tests deal with them:

* **Odd chips.** RULES.md 3.9 gives left-over cents one each clockwise from the button's
  left; pokerkit gives all of them to the first winner. pokerkit also drops mucked
  hands from the pots and merges pots whose contenders are then the same, so a split
  spread over several pots (ties, or hi-lo halves) leaves one odd chip where we leave
  several. For the winners
  of a pot split with cents left over the tests compare the sum of their stacks (everyone
  else exactly). Run twice, an odd pot's extra chip goes to the first run in both
  engines, but pokerkit's pot boundaries differ from ours, so it is compared the same way.
* **Hi-lo side pots without a low.** pokerkit halves every pot once any hand at the
  showdown has a qualifying low, even a pot none of whose eligible players has one; it
  then splits that "low" half among all of them (or burns it, warning "some chips will
  be burned"). RULES.md gives such a pot whole to the high hand. Those hands are counted
  and skipped; the test asserts they stay a minority and that the engine conserved
  every chip.
* **Short blinds** (finer points 17 and 18). A blind posted all-in for less still sets the
  amount to call, the raise sizes and the preflop pot-limit maximum in our engine, as if
  posted in full; pokerkit only asks to match what was posted and counts only the chips
  in the pot. Every call would then differ, so the generator gives the blind seats the
  chips to post in full (other stacks stay short) and the difference is pinned below
  (``test_pokerkit_differs_finer_point_17_*`` and ``_18_*``). The engine never posts a
  straddle short.
* **Short all-ins** (finer points 1, 19 and 21). After a short all-in on a street the raise
  options may differ in three known ways, each named when it is met; the driver then
  only picks actions both engines allow (call or fold) for that decision:

  - *counted toward the cap*: pokerkit counts a short all-in as one of the limit bets, so
    it caps the round a bet early (finer point 21 says it does not count);
  - *short of a full raise since pokerkit's last one*: pokerkit adds up only the short
    all-ins since the last full raise or since they last added up to one, so a player
    who already acted and faces a full raise made of all-ins on both sides of that point
    may not raise there (finer point 19 counts everything they face);
  - *taken for a full bet*: pokerkit measures a raise against the largest bet or raise
    of the street so far, which starts from nothing rather than from the minimum bet or
    the blinds: an all-in for less that opens a street, or raises the blinds (or the
    straddle) before any full raise, becomes its yardstick and so reopens the betting
    for the players who already acted, as does a later all-in as large (finer points 1
    and 21 say neither is a full bet; pinned below for a short opening bet).

  RULES.md's own example of finer point 19 plays the same in both (pinned below).
* **Nobody left to call** (finer point 20): both engines refuse a bet or raise when no
  other player still in could call any of it (pinned below).
* **Idle checks.** When the only other player left is all-in for less than the big
  blind, pokerkit still asks the big blind to check; our engine closes the round (there
  is nothing to call and nobody to raise against). The driver plays that check in
  pokerkit alone.
* **Spread limit** has no pokerkit equivalent and is not compared here (the engine's own
  tests cover it).
* **Rules PHH and pokerkit lack** (all-in protection, kill, overblind, chop) are not
  played here; timeouts are replaced by ordinary actions.
* **Run it twice** (``test_run_it_twice_*``): every all-in before the river is run twice
  in both engines (all our players agree; pokerkit's select two runouts), and pokerkit
  deals the second run's streets from the deck after the first run's, as ours does.
"""

from __future__ import annotations

import random
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace

import pytest
from pokerkit import State

from tables.engine import testing
from tables.engine.actions import Action, ActionKind
from tables.engine.betting import Street
from tables.engine.config import Game, Structure, TableConfig
from tables.engine.deck import shuffled_deck
from tables.engine.events import Event
from tables.engine.positions import blind_seats
from tables.engine.state import HandState, SeatEntry, apply, start_hand
from tests.engine import pokerkit_adapter as pka

GAMES = [Game.HOLDEM, Game.OMAHA, Game.OMAHA8]
STRUCTURES = [Structure.FL, Structure.PL, Structure.NL]
BIG_BLIND = 100
STREETS = list(Street)


def random_config(rng: random.Random, game: Game, structure: Structure) -> TableConfig:
    """A stake level with an ante now and then, a straddle option, and varied rake caps."""
    return TableConfig(
        game=game,
        structure=structure,
        big_blind=BIG_BLIND,
        ante=rng.choice((0, 0, 0, 10)),
        allow_straddle=rng.random() < 0.3,
        rake_percent=rng.choice((500, 500, 1000)),
        rake_caps=rng.choice((((2, 300),), ((2, 100), (3, 200), (5, 300)))),
        no_flop_no_drop=rng.random() < 0.8,
    )


def random_seats(rng: random.Random) -> list[SeatEntry]:
    """2 to 9 players on a 10-seat table; about a third of them short-stacked."""
    n = rng.randint(2, 9)
    seats = sorted(rng.sample(range(1, 11), n))
    return [
        SeatEntry(
            seat=seat,
            player=f"u{seat}",
            stack=rng.randint(1, 8 * BIG_BLIND)
            if rng.random() < 0.35
            else rng.randint(20 * BIG_BLIND, 150 * BIG_BLIND),
            straddle=rng.random() < 0.5,
        )
        for seat in seats
    ]


def cover_blinds(seats: list[SeatEntry], button: int, config: TableConfig) -> list[SeatEntry]:
    """Give the blinds (and the straddle seat) the chips to post in full (see the
    "short blinds" known difference)."""
    dealt_in = [e.seat for e in seats]
    posters = set(blind_seats(button, dealt_in))
    if len(seats) >= 3:
        bb = dealt_in.index(blind_seats(button, dealt_in)[1])
        posters.add(dealt_in[(bb + 1) % len(seats)])
    floor = config.ante + 2 * config.big_blind + 1
    return [replace(e, stack=max(e.stack, floor)) if e.seat in posters else e for e in seats]


@dataclass
class Outcome:
    """What one differential hand showed."""

    known: Counter[str] = field(default_factory=Counter)
    burned: bool = False


@dataclass
class Mismatch(AssertionError):
    """A difference between the engines that no known difference explains."""

    what: str
    history: list[str]

    def __str__(self) -> str:
        return f"{self.what}\n  history: {'; '.join(self.history)}"


def _raise_gap_is_known(ours: HandState, pk: State, short_all_in: bool) -> str | None:
    """Name the known difference behind differing raise options, if there is one (the
    "short all-ins" of the module docstring; any other gap is a mismatch)."""
    if not short_all_in:
        return None
    legal = ours.legal_actions()
    pk_can_raise = pk.can_complete_bet_or_raise_to()
    if legal.can_bet_raise and not pk_can_raise:
        street = pk.street
        if (
            street is not None
            and pk.completion_betting_or_raising_count
            == street.max_completion_betting_or_raising_count
        ):
            return "short all-in counted toward the cap"
        return "short of a full raise since pokerkit's last one"
    if pk_can_raise and legal.raise_closed == "raise_not_reopened":
        return "short all-in taken for a full bet"
    return None


def choose(
    ours: HandState, pk: State, rng: random.Random, short_all_in: bool, out: Outcome, log: list
) -> Action:
    """Compare both engines' options, then pick a random action both allow."""
    legal = ours.legal_actions()
    seat = legal.seat
    order = pka.phh_order(ours)
    if pk.actor_index is None or order[pk.actor_index] != ours.actor_index:
        raise Mismatch(f"actor: ours seat {seat}, pokerkit p{pk.actor_index}", log)
    pk_call = pk.checking_or_calling_amount
    if (legal.call_amount or 0) != pk_call:
        raise Mismatch(f"call amount: ours {legal.call_amount}, pokerkit {pk_call}", log)
    can_raise = legal.can_bet_raise
    pk_bounds = None
    if pk.can_complete_bet_or_raise_to():
        pk_bounds = (
            pk.min_completion_betting_or_raising_to_amount,
            pk.max_completion_betting_or_raising_to_amount,
        )
    ours_bounds = (legal.min_to, legal.max_to) if can_raise else None
    if ours_bounds != pk_bounds:
        known = _raise_gap_is_known(ours, pk, short_all_in)
        if known is None:
            raise Mismatch(f"raise bounds: ours {ours_bounds}, pokerkit {pk_bounds}", log)
        out.known[known] += 1
        can_raise = False
    options = []
    if legal.can_fold and rng.random() < 0.5:
        options.append(Action.fold(seat))
    options.append(Action.check(seat) if legal.can_check else Action.call(seat))
    if can_raise and legal.min_to is not None and legal.max_to is not None:
        low, high = legal.min_to, legal.max_to
        for to in {low, high, rng.randint(low, high)}:
            options.append(Action.bet_raise(seat, to))
    return rng.choice(options)


def play_hand(
    seed: str, game: Game, structure: Structure, *, rake: bool, run_twice: bool = False
) -> Outcome:
    """Play one random hand in both engines and compare them; raise Mismatch if they differ.

    ``run_twice``: the table plays run it twice, and whenever the players are asked they
    all agree (pokerkit's players select two runouts).
    """
    rng = random.Random(seed)
    config = random_config(rng, game, structure)
    if not rake:
        config = replace(config, rake_percent=0)
    if run_twice:
        config = replace(config, run_it_twice=True)
    seats = random_seats(rng)
    button = rng.choice(seats).seat
    seats = cover_blinds(seats, button, config)
    ours, events = start_hand(config, seats, button=button, deck=shuffled_deck(rng))
    pk = pka.start_like(ours, rake=rake)
    board = pka.board_of(ours, runs=2 if run_twice else 1)
    out = Outcome()
    log = [f"seed {seed!r} rake={rake} stacks {list(ours.starting_stacks)}"]
    street, short_all_in = ours.street, False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pka.deal_due_board(pk, board)
        while not ours.over:
            action = choose(ours, pk, rng, short_all_in, out, log)
            log.append(f"seat {action.seat} {action.kind} {action.to or ''}".strip())
            before = ours
            ours, new = apply(ours, action)
            events.extend(new)
            pka.play(pk, str(action.kind), action.to)
            if ours.run_twice is not None and ours.asking_run_twice:
                ours, new = _everyone_agrees(ours, pk, log)
                events.extend(new)
                out.known["run twice"] += 1
            pka.deal_due_board(pk, board)
            while (
                pk.actor_index is not None
                and pk.checking_or_calling_amount == 0
                and (ours.over or pk.street_index != STREETS.index(ours.street))
            ):
                # pokerkit asks for a check our engine does not (see "Idle checks").
                pk.check_or_call()
                pka.deal_due_board(pk, board)
                out.known["idle check"] += 1
            if ours.street is not street:
                street, short_all_in = ours.street, False
            elif action.kind is ActionKind.BET_RAISE and ours.last_raise == before.last_raise:
                short_all_in = short_all_in or ours.full_bets == before.full_bets
    if pk.status:
        raise Mismatch("pokerkit's hand is not over", log)
    out.burned = any("burned" in str(w.message) for w in caught) or pka.lowless_side_pot(ours)
    if out.burned:
        assert sum(ours.stacks) + ours.result.rake == sum(ours.starting_stacks)
        return out
    _compare_stacks(ours, events, pk, out, log)
    return out


def _everyone_agrees(ours: HandState, pk: State, log: list[str]) -> tuple[HandState, list[Event]]:
    """Every player asked agrees to run it twice in our engine; in pokerkit every
    runout-count selector selects two."""
    events: list[Event] = []
    assert ours.run_twice is not None
    for seat in ours.run_twice.undecided:
        ours, new = apply(ours, Action.run_twice(seat, agree=True))
        events.extend(new)
    log.append("everyone agrees to run it twice")
    if not pk.can_select_runout_count():
        raise Mismatch("pokerkit offers no runout count where ours asks", log)
    while pk.can_select_runout_count():
        pk.select_runout_count(2)
    return ours, events


def _compare_stacks(
    ours: HandState, events: list[Event], pk: State, out: Outcome, log: list[str]
) -> None:
    """Finishing stacks exactly, except odd-chip groups (compared by their total)."""
    order = pka.phh_order(ours)
    pk_stacks = {ours.seats[i]: pk.stacks[k] for k, i in enumerate(order)}
    our_stacks = dict(zip(ours.seats, ours.stacks, strict=True))
    groups = pka.odd_chip_groups(events)
    for group in groups:
        out.known["odd chips"] += 1
        if sum(our_stacks.pop(s) for s in group) != sum(pk_stacks.pop(s) for s in group):
            raise Mismatch(f"odd-chip group {sorted(group)}: stacks differ in total", log)
    if our_stacks != pk_stacks:
        raise Mismatch(f"finishing stacks: ours {our_stacks}, pokerkit {pk_stacks}", log)
    if ours.result is not None:
        pk_rake = sum(p.raked_amount for p in pk._pots or ())
        if ours.result.rake != pk_rake:
            raise Mismatch(f"rake: ours {ours.result.rake}, pokerkit {pk_rake}", log)


def run(
    game: Game, structure: Structure, hands: int, seed: int, *, run_twice: bool = False
) -> Counter[str]:
    """Play ``hands`` hands (half raked); return counts of known differences met."""
    totals: Counter[str] = Counter()
    for k in range(hands):
        out = play_hand(
            f"{seed}/{game}/{structure}/{k}",
            game,
            structure,
            rake=k % 2 == 1,
            run_twice=run_twice,
        )
        totals.update(out.known)
        totals["hands"] += 1
        totals["hi-lo side pot without a low (skipped)"] += out.burned
    assert totals["hi-lo side pot without a low (skipped)"] <= hands // 4 + 1
    return totals


# Hands per game x structure in `make test`: pokerkit's hand evaluation, most of the
# time here, is quick for Hold'em and slow for Omaha (60 ways to make each hand, hi-lo
# twice), so Omaha plays fewer and the file stays well under a minute; `make verify`
# runs thousands.
HANDS = {Game.HOLDEM: 120, Game.OMAHA: 60, Game.OMAHA8: 60}


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("game", GAMES)
def test_engine_matches_pokerkit(game: Game, structure: Structure) -> None:
    totals = run(game, structure, hands=HANDS[game], seed=7)
    assert totals["hands"] == HANDS[game]


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("game", GAMES)
def test_run_it_twice_matches_pokerkits_two_runouts(game: Game, structure: Structure) -> None:
    # Every all-in before the river is run twice in both engines: the same two boards
    # from the deck, rake once, each pot halved (odd chip to the first run), each half
    # awarded on its own board.
    hands = HANDS[game] // 2
    totals = run(game, structure, hands=hands, seed=16, run_twice=True)
    assert totals["hands"] == hands and totals["run twice"] >= 5, totals


@pytest.mark.verify
@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("game", GAMES)
def test_engine_matches_pokerkit_long(game: Game, structure: Structure) -> None:
    totals = run(game, structure, hands=2000, seed=11)
    print(game, structure, dict(totals))


@pytest.mark.verify
@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("game", GAMES)
def test_run_it_twice_matches_pokerkits_two_runouts_long(game: Game, structure: Structure) -> None:
    totals = run(game, structure, hands=1000, seed=17, run_twice=True)
    print(game, structure, dict(totals))


# -- Pinned differences: the finer points pokerkit plays otherwise (RULES.md section 8) --
# Each test plays one hand in both engines and pins what each offers the player to act
# (call amount, minimum and maximum raise): ours by RULES.md, pokerkit 0.7.7 as it is. A
# pokerkit upgrade that changes its side fails here, by name.

Offer = tuple[int | None, int | None, int | None]


def offers_after(
    config: TableConfig, stacks: dict[int, int], button: int, *specs: str
) -> tuple[Offer, Offer]:
    """Play ``specs`` (as ``tables.engine.testing.act``) in both engines; return what each
    offers the player to act then: ``(call, min_to, max_to)`` (None when not offered)."""
    ours, _ = testing.begin(config, stacks, button=button)
    pk = pka.start_like(ours)
    board = pka.board_of(ours)
    pka.deal_due_board(pk, board)
    for spec in specs:
        ours, _ = testing.act(ours, spec)
        word, _, amount = spec.partition(" ")
        pka.play(pk, "bet_raise" if word in ("bet", "raise") else word, int(amount or 0))
        pka.deal_due_board(pk, board)
    legal = ours.legal_actions()
    assert pk.actor_index is not None and pka.phh_order(ours)[pk.actor_index] == ours.actor_index
    return (
        (legal.call_amount, legal.min_to, legal.max_to),
        (
            pk.checking_or_calling_amount or None,
            pk.min_completion_betting_or_raising_to_amount,
            pk.max_completion_betting_or_raising_to_amount,
        ),
    )


def test_pokerkit_differs_finer_point_17_short_big_blind_counts_in_full() -> None:
    """Blinds 1/2, big blind all-in for 1: we ask 2 to call and a raise to 4; pokerkit asks
    1 and a raise to 3. $3/$6 limit, big blind all-in for $1: $3 and $6 against $1 and $4."""
    nl = TableConfig(game=Game.HOLDEM, structure=Structure.NL, big_blind=2)
    ours, pk = offers_after(nl, {1: 100, 2: 100, 3: 1, 4: 100}, 1)
    assert ours == (2, 4, 100) and pk == (1, 3, 100)
    fl = TableConfig(game=Game.HOLDEM, structure=Structure.FL, big_blind=300)
    ours, pk = offers_after(fl, {1: 10_000, 2: 10_000, 3: 100, 4: 10_000}, 1)
    assert ours == (300, 600, 600) and pk == (100, 400, 400)


def test_pokerkit_differs_finer_point_18_preflop_pot_limit_counts_blinds_in_full() -> None:
    """PL 100/200 with the small blind all-in for 30: we allow a raise to 700 (the blinds
    counted as 100 + 200), pokerkit to 630 (the 230 chips in). With the big blind all-in
    for 100 (finer point 17 too): 200 to call and a raise to 700, against 100 and 400."""
    pl = TableConfig(game=Game.OMAHA, structure=Structure.PL, big_blind=200, small_blind=100)
    ours, pk = offers_after(pl, {1: 10_000, 2: 30, 3: 10_000, 4: 10_000}, 1)
    assert ours == (200, 400, 700) and pk == (200, 400, 630)
    ours, pk = offers_after(pl, {1: 10_000, 2: 10_000, 3: 100, 4: 10_000}, 1)
    assert ours == (200, 400, 700) and pk == (100, 300, 400)


NL_1_2 = TableConfig(game=Game.HOLDEM, structure=Structure.NL, big_blind=2)
#: Six players limp in for 2 (the button folds); on the flop A (seat 1) bets 100, B
#: (seat 2) is all-in for 150, seat 3 calls, C (seat 4) is all-in for 210, seat 5 calls.
FINER_19 = ("call", "call", "call", "fold", "call", "check")
FINER_19 += ("bet 100", "raise 150", "call", "raise 210", "call")


def test_pokerkit_agrees_finer_point_19_rules_example() -> None:
    """RULES example: A faces 110 and may raise to 310; the player who called 150 faces
    60 and may only call or fold. pokerkit 0.7.7 adds the short all-ins up the same way."""
    stacks = {1: 1000, 2: 152, 3: 1000, 4: 212, 5: 1000, 6: 1000}
    ours, pk = offers_after(NL_1_2, stacks, 6, *FINER_19)
    assert ours == pk == (110, 310, 998)
    ours, pk = offers_after(NL_1_2, stacks, 6, *FINER_19, "call")
    assert ours == pk == (60, None, None)


def test_pokerkit_differs_finer_point_19_short_all_ins_on_both_sides_of_a_reopening() -> None:
    """As the RULES example, but the button then goes all-in for 260 (50 more): A faces
    160 and may raise by finer point 19; pokerkit counts only the 50 since B's and C's
    all-ins added up, and refuses."""
    stacks = {1: 1000, 2: 152, 3: 1000, 4: 212, 5: 1000, 6: 262}
    specs = ("call",) * 5 + ("check", "bet 100", "raise 150", "call", "raise 210", "call")
    ours, pk = offers_after(NL_1_2, stacks, 6, *specs, "raise 260")
    assert ours == (160, 360, 998) and pk == (160, None, None)


def test_pokerkit_agrees_finer_point_20_nobody_left_to_call() -> None:
    """The button all-in for 1000 and the big blind with exactly 1000: no raise in either."""
    nl = TableConfig(game=Game.HOLDEM, structure=Structure.NL, big_blind=100)
    ours, pk = offers_after(nl, {1: 1000, 2: 10_000, 3: 1000}, 1, "raise 1000")
    assert ours == pk == (950, None, None)


def test_pokerkit_differs_finer_point_21_short_all_in_not_counted_toward_the_cap() -> None:
    """FL 100/200 flop: bet, raise, re-raise, then an all-in for 50 more: we let the next
    player make the fourth bet, to 450; pokerkit counted the all-in as the fourth."""
    fl = TableConfig(game=Game.HOLDEM, structure=Structure.FL, big_blind=100)
    stacks = {1: 10_000, 2: 10_000, 3: 10_000, 4: 450, 5: 10_000}
    specs = ("call",) * 4 + ("check", "bet 100", "raise 200", "raise 300", "raise 350")
    ours, pk = offers_after(fl, stacks, 5, *specs)
    assert ours == (350, 450, 450) and pk == (350, None, None)


def test_pokerkit_differs_finer_point_21_short_all_in_opening_a_street() -> None:
    """FL 100/200 flop: A checks, B bets all-in for 60 (less than the 100 bet), C calls:
    A may only call (finer point 21); pokerkit took the 60 for a full bet and lets A raise
    (to 160: a full bet on top of it)."""
    fl = TableConfig(game=Game.HOLDEM, structure=Structure.FL, big_blind=100)
    stacks = {1: 10_000, 2: 160, 3: 10_000}  # button 3: SB 1 (A), BB 2 (B)
    specs = ("call", "call", "check", "check", "bet 60", "call")
    ours, pk = offers_after(fl, stacks, 3, *specs)
    assert ours == (60, None, None) and pk == (60, 160, 160)
