"""PHH, the open poker hand-history standard: export a finished hand, import and replay one.

PHH (pokerkit's "Poker Hand History", a TOML file) is what auditors read through the API
(RULES.md section 9) and what ``manage.py phh_replay`` replays. Like the other formats
of :mod:`tables.formats` it is pure: it imports neither Django nor pokerkit (a
test-only dependency); it writes TOML itself and reads it with the standard library's
:mod:`tomllib`.

Export (:func:`export_phh`) takes the final :class:`~tables.engine.state.HandState` and
the events of the hand (those of ``start_hand`` and of every ``apply``, in order).

* **Players.** PHH numbers players ``p1..pn`` clockwise from the seat left of the button,
  so the button is the last player (heads-up: ``p1`` is the big blind, ``p2`` the button
  and small blind), as pokerkit does. The ``seats`` field gives each player's seat.
* **Variant.** ``FT``/``NT``/``PO``/``FO/8`` are PHH's own codes; the other games and
  structures follow the same pattern: ``F``/``P``/``N`` + ``T`` (hold'em) or ``O`` (Omaha)
  + ``/8`` for hi-lo. Spread limit is written as fixed limit plus ``_structure = "SL"``
  and ``_spread_min``/``_spread_max``.
* **Antes** are the same for everyone; with antes the file says
  ``ante_trimming_status = true`` (PHH's field: an ante all-in for less wins only what
  it matched).
* **Amounts** are integer cents. ``blinds_or_straddles`` lists the nominal live blind of
  each player in player order (a straddle is the third entry); heads-up it is
  ``[small, big]`` as PHH reads it. A newcomer's live big blind is a negative entry
  (``[50, 100, 0, -100, 0]``): pokerkit's "post bet", a live bet that does not move the
  first to act, where a third positive entry would be a straddle. ``winnings`` are the
  chips each player took from the pots (after rake); ``finishing_stacks`` the stacks
  after the hand.
* **Actions.** ``d dh p1 AsKs`` (every hole card, for auditors), ``p1 f``, ``p1 cc``
  (check or call), ``p1 cbr 300`` (bet or raise *to* a street total of 300),
  ``d db Jc3d5c``, ``p2 sm AsKs`` (shown) and ``p2 sm -`` (mucked). When betting ends
  because players are all-in, every hand is shown before the rest of the board is dealt
  (finer point 12), which is also the order PHH readers expect.
* **User fields** (leading underscore) carry what PHH lacks: ``_rake_percentage``
  (fraction), ``_rake_cap`` (cents, the cap for this hand's number of players),
  ``_rake_no_flop_no_drop``, ``_rake`` (cents taken), ``_deck_commitment``, ``_deck``
  (the 52 cards in deal order), ``_salt``, ``_min_bet_doubles_late`` and ``_big_bet``.
* **Rules PHH cannot express** set a marker to true and record their events as comment
  actions (``# ...``): ``_allin_protection`` (``# p3 timeout: all-in protected``),
  ``_kill`` (with ``_kill_seat``, ``_kill_multiplier``, ``_small_blind``, ``_big_blind``),
  ``_overblind`` (with ``_overblind_seat`` and the blinds), ``_chop`` and
  ``_short_blind`` (a live blind posted all-in for less, which counts in full, finer
  points 17-18, where PHH readers count what was posted: ``# p2 posts the big blind
  all-in for 60 of 100``, no line when the ante took every chip). A timeout that checked
  or folded is the plain action with a ``# timeout`` comment. In fixed and spread limit,
  ``_short_all_in_cap`` marks a street with more than 4 bets and raises, short all-ins
  included: finer point 21 does not count those toward the cap, PHH readers do.
* **Run it twice.** A table that plays it says ``_run_it_twice = true``. The answers of
  the players asked are comments (``# p1 agrees to run it twice``, ``# p2 refuses to
  run it twice: timeout``); a hand run twice sets ``_run_twice = true`` (PHH readers
  deal one board and award whole pots) and writes the second run's cards as comments
  after the first run's deals (``# run 2: d db Ks``), which the replay checks.

Import (:func:`parse_phh`, :func:`replay_phh`) reads such a file back, rebuilds the
table configuration, the seats and the deck (``_deck``, else from the dealt cards), plays
every action through :func:`~tables.engine.act.apply_in_place` and exports the hand again: the
finishing stacks, winnings and rake are the engine's, never copied from the input. An
action the engine refuses raises :class:`PhhReplayError` with its index and the reason.
"""

from __future__ import annotations

import datetime
import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tables.engine import errors
from tables.engine.actions import Action
from tables.engine.cards import cards_str, parse_cards
from tables.engine.config import Game, KillInfo, KillMode, Structure, TableConfig
from tables.engine.deck import deck_commitment
from tables.engine.events import (
    Acted,
    Chopped,
    DealtBoard,
    Event,
    HoleCards,
    Mucked,
    Posted,
    Protected,
    RunTwiceAnswered,
    Shown,
    TimedOut,
)
from tables.engine.state import HandState, SeatEntry, apply_in_place, start_hand

_GAME_LETTER = {Game.HOLDEM: "T", Game.OMAHA: "O", Game.OMAHA8: "O"}
_STRUCTURE_LETTER = {Structure.FL: "F", Structure.SL: "F", Structure.PL: "P", Structure.NL: "N"}
_VARIANTS: dict[str, tuple[Game, Structure]] = {
    f"{s}{g}{'/8' if game.hi_lo else ''}": (game, structure)
    for game, g in _GAME_LETTER.items()
    for structure, s in _STRUCTURE_LETTER.items()
    if structure is not Structure.SL
}
#: Rake percentages are written as fractions with at most 4 decimals (basis points).
_BASIS = 10_000
_KILL_MULTIPLIERS = {"2": KillMode.FULL, "1.5": KillMode.HALF}
_PROTECTED = re.compile(r"^p(\d+) timeout: all-in protected\b")
_RUN_TWICE = re.compile(r"^p(\d+) (agrees|refuses) to run it twice(: timeout)?$")
_SECOND_RUN = re.compile(r"^run 2: d db (\S+)$")
_VERBS = {"fold": "f", "check": "cc", "call": "cc"}  # other actions: "cbr <street total>"
#: What the replay does with a line of ``actions``: ``(verb, player, number, timeout)``.
#: ``verb`` is "f", "cc", "cbr" (``number``: the street total), "sm", "protected" (a
#: timeout the file says was all-in protected), "db" (``player`` empty, ``number``: the
#: cards dealt), "rit" (an answer to run it twice, ``number`` 1 to agree), "db2" (cards
#: of the second run, ``number`` of them) or "" (not an action of these games);
#: ``timeout``: the file says the fold, check, protection or answer was a timeout's.
Play = tuple[str, str, int, bool]
_TIMEOUT_RESOLUTIONS = {"cc": "check", "f": "fold", "protected": "protected"}
_PLAYER_NAMES = tuple(f"p{k}" for k in range(1, 11))  # a hand has at most 10 players


class PhhError(ValueError):
    """A PHH text that cannot be read or does not describe a hand this engine plays."""


class PhhReplayError(PhhError):
    """An action of the file that the engine refused (``index`` into ``actions``)."""

    def __init__(self, index: int, action: str, reason: str) -> None:
        super().__init__(f"action {index} ({action!r}): {reason}")
        self.index = index
        self.action = action
        self.reason = reason


def variant_code(game: Game, structure: Structure) -> str:
    """The PHH variant code of a game and structure (spread limit: the fixed-limit code).

    >>> variant_code(Game.HOLDEM, Structure.NL), variant_code(Game.OMAHA8, Structure.FL)
    ('NT', 'FO/8')
    """
    suffix = "/8" if game.hi_lo else ""
    return f"{_STRUCTURE_LETTER[structure]}{_GAME_LETTER[game]}{suffix}"


# ---------------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PhhMeta:
    """Optional standard fields of a PHH file that the hand state does not know."""

    table: str | int | None = None
    seat_count: int | None = None
    time: datetime.datetime | None = None
    currency: str | None = None
    salt: str | None = None


def export_phh(state: HandState, events: Sequence[Event], meta: PhhMeta | None = None) -> str:
    """The PHH text of a finished hand from its final state and all its events."""
    if not state.over or state.result is None:
        raise PhhError("Only a finished hand can be exported.")
    meta = meta or PhhMeta()
    cfg = state.config
    result = state.result
    seats = state.seats
    n = len(seats)
    b = seats.index(state.button)
    # Player k (0-based) of the PHH file is engine index order[k], named player[seat].
    order = [*range(b + 1, n), *range(b + 1)]
    seats_in_order = [seats[i] for i in order]
    player = dict(zip(seats_in_order, _PLAYER_NAMES, strict=False))
    actions, posted, protected, over_cap = _actions(state, events, player)
    blinds = _blinds_or_straddles(state, posted, {seat: k for k, seat in enumerate(seats_in_order)})
    # The engine's ints are written as Python writes a list of them; values from outside
    # the engine go through _toml.
    lines = [
        f'variant = "{variant_code(cfg.game, cfg.structure)}"',
        f"antes = {_ints([cfg.ante] * n)}",
        f"blinds_or_straddles = {_ints(blinds)}",
    ]
    if cfg.ante:
        # PHH's own field: a player all-in from the ante wins from each opponent only the
        # ante they matched, as in the engine (readers default to one pot of every ante).
        lines.insert(2, "ante_trimming_status = true")
    if cfg.structure.is_limit:
        lines.append(f"small_bet = {cfg.small_bet}")
        lines.append(f"big_bet = {cfg.big_bet}")
    else:
        lines.append(f"min_bet = {cfg.big_blind}")
    lines.append(f"starting_stacks = {_ints([state.starting_stacks[i] for i in order])}")
    # The action lines are ours: plain ASCII, written as is between quotes.
    lines.append('actions = ["' + '", "'.join(actions) + '"]' if actions else "actions = []")
    if state.hand_id:
        hand = int(state.hand_id) if state.hand_id.isdigit() else state.hand_id
        lines.append(f"hand = {_toml(hand)}")
    if meta.table is not None:
        lines.append(f"table = {_toml(meta.table)}")
    lines.append(f"seats = {_ints(seats_in_order)}")
    if meta.seat_count is not None:
        lines.append(f"seat_count = {_toml(meta.seat_count)}")
    lines.append(f"players = {_toml([state.players[i] for i in order])}")
    if meta.time is not None:
        utc = meta.time.astimezone(datetime.UTC)
        lines.append(f"time = {utc:%H:%M:%S}")
        lines.append('time_zone = "UTC"')
        lines += [f"day = {utc.day}", f"month = {utc.month}", f"year = {utc.year}"]
    lines.append(f"finishing_stacks = {_ints([state.stacks[i] for i in order])}")
    lines.append(f"winnings = {_ints([result.winnings[i] for i in order])}")
    if meta.currency is not None:
        lines.append(f"currency = {_toml(meta.currency)}")
    _user_fields(lines, state, protected, over_cap, meta)
    lines.append("")  # the text ends with a newline
    return "\n".join(lines)


def _blinds_or_straddles(
    state: HandState, posted: list[Posted], position: dict[int, int]
) -> list[int]:
    """Nominal live blind per player (PHH order; heads-up ``[small, big]``) from the
    ``posted`` events; ``position[seat]`` is the seat's index in PHH order.

    A newcomer's big blind is negative, pokerkit's "post bet": a live bet that leaves
    the first to act left of the big blind (a positive third entry is a straddle). The
    small and big blind are written even when the ante left their seat nothing to post.
    """
    cfg = state.config
    seats = state.seats
    out = [0] * len(seats)
    out[position[seats[state.small_blind_index]]] = cfg.small_blind
    out[position[seats[state.big_blind_index]]] = cfg.big_blind
    for e in posted:
        if e.kind in _BLIND_LABELS:
            full = _nominal_blind(state, e.kind)
            out[position[e.seat]] = -full if e.kind == "newcomer_big_blind" else full
    if state.blind_shortfall:
        for i in _newcomers_all_in_from_the_ante(state, posted):
            out[position[seats[i]]] = -cfg.big_blind
    n = len(seats)
    if n == 2:
        out.reverse()  # PHH lists the heads-up small blind (the button's, p2) first
    return out


def _newcomers_all_in_from_the_ante(state: HandState, posted: list[Posted]) -> list[int]:
    """The newcomers whose big blind the ante left nothing to post (no ``posted`` event),
    found from what ``blind_shortfall`` leaves unexplained: the players all-in from the
    ante outside the blinds, when there are exactly as many as such newcomers (never
    guessed among more; the file then lacks them and its replay the shortfall)."""
    cfg = state.config
    explained = 0
    paid: set[int] = set()
    seat_index = {seat: i for i, seat in enumerate(state.seats)}
    for e in posted:
        if e.kind in _BLIND_LABELS:
            explained += _nominal_blind(state, e.kind) - e.amount
            paid.add(seat_index[e.seat])
    forced = {state.small_blind_index, state.big_blind_index}
    if state.killer is not None:
        forced.add(state.killer)
    for i in forced - paid:  # the ante took every chip of these blinds
        if i == state.killer:
            explained += _nominal_blind(state, "kill_blind")
        else:
            explained += cfg.small_blind if i == state.small_blind_index else cfg.big_blind
    count, rest = divmod(state.blind_shortfall - explained, cfg.big_blind)
    candidates = [
        i
        for i, stack in enumerate(state.starting_stacks)
        if i not in forced and i not in paid and 0 < stack == state.antes[i]
    ]
    return candidates if count and not rest and len(candidates) == count else []


#: The live forced bets, as a comment line names them.
_BLIND_LABELS = {
    "small_blind": "the small blind",
    "big_blind": "the big blind",
    "newcomer_big_blind": "a newcomer's big blind",
    "straddle": "a straddle",
    "overblind": "an overblind",
    "kill_blind": "a kill blind",
}


def _nominal_blind(state: HandState, kind: str) -> int:
    """The full amount of a live forced bet of this kind (one of :data:`_BLIND_LABELS`)."""
    cfg = state.config
    if kind == "small_blind":
        return cfg.small_blind
    if kind in ("big_blind", "newcomer_big_blind"):
        return cfg.big_blind
    if kind == "kill_blind":
        limits = state.limits
        return limits.small_bet if cfg.structure is Structure.FL else limits.spread_min
    return 2 * cfg.big_blind  # a straddle or an overblind


#: Bets and raises a limit street may have for PHH readers (pokerkit's fixed-limit games),
#: who count a short all-in among them; finer point 21 does not, so a street may have
#: more here.
_PHH_LIMIT_CAP = 4


def _actions(
    state: HandState, events: Sequence[Event], player: dict[int, str]
) -> tuple[list[str], list[Posted], bool, bool]:
    """The PHH action lines of the hand's events; also, from the same pass over the
    events, the blinds posted, whether a player was all-in protected and whether a limit
    street had more bets and raises than PHH readers allow (:data:`_PHH_LIMIT_CAP`)."""
    lines: list[str] = []
    showdown: list[str] = []
    posted: list[Posted] = []
    protected = over_cap = False
    bets = 0  # bets and raises on this street, short all-ins included
    runout_from: int | None = None  # index in ``lines`` where the run-out deals begin
    timed_out = False
    for e in events:
        if isinstance(e, Acted):
            verb = _VERBS.get(e.action)
            if verb is None:
                verb = f"cbr {e.street_total}"
                bets += 1
            lines.append(
                f"{player[e.seat]} {verb} # timeout" if timed_out else f"{player[e.seat]} {verb}"
            )
            timed_out = False
            runout_from = None
        elif isinstance(e, HoleCards):
            lines.append(f"d dh {player[e.seat]} {cards_str(e.cards)}")
        elif isinstance(e, DealtBoard):
            over_cap = over_cap or bets > _PHH_LIMIT_CAP
            bets = 0
            if runout_from is None:
                runout_from = len(lines)
            run = "# run 2: " if e.run == 2 else ""
            lines.append(f"{run}d db {cards_str(e.cards)}")
        elif isinstance(e, RunTwiceAnswered):
            word = "agrees" if e.agree else "refuses"
            timeout = ": timeout" if e.timed_out else ""
            lines.append(f"# {player[e.seat]} {word} to run it twice{timeout}")
        elif isinstance(e, Posted):
            posted.append(e)
            if e.all_in and e.kind in _BLIND_LABELS:
                full = _nominal_blind(state, e.kind)
                if e.amount < full:  # finer point 17: it counts in full all the same
                    label = _BLIND_LABELS[e.kind]
                    lines.append(
                        f"# {player[e.seat]} posts {label} all-in for {e.amount} of {full}"
                    )
                    continue
            if e.kind in ("kill_blind", "overblind"):
                label = "a kill blind" if e.kind == "kill_blind" else "an overblind"
                lines.append(f"# {player[e.seat]} posts {label} of {e.amount}")
        elif isinstance(e, TimedOut):
            timed_out = True
        elif isinstance(e, Protected):
            lines.append(f"# {player[e.seat]} timeout: all-in protected with {e.amount_in} in")
            protected = True
            timed_out = False
            runout_from = None
        elif isinstance(e, Shown) and e.run == 1:  # (shown again for run 2: once here)
            showdown.append(f"{player[e.seat]} sm {cards_str(e.cards)}")
        elif isinstance(e, Mucked):
            showdown.append(f"{player[e.seat]} sm -")
        elif isinstance(e, Chopped):
            blinds = " and ".join(player[s] for s in e.seats)
            lines.append(f"# chop: {blinds} take back their blinds")
    if state.runout and runout_from is not None:
        # All-in: the hands are turned face up before the rest of the board is dealt.
        lines[runout_from:runout_from] = showdown
    else:
        lines += showdown
    over_cap = (over_cap or bets > _PHH_LIMIT_CAP) and state.config.structure.is_limit
    return lines, posted, protected, over_cap


def _user_fields(
    lines: list[str], state: HandState, protected: bool, over_cap: bool, meta: PhhMeta
) -> None:
    """Add the underscore fields: rake, spread, deck commitment and special-rule markers."""
    cfg = state.config
    result = state.result
    if cfg.structure is Structure.SL:
        lines.append('_structure = "SL"')
        lines.append(f"_spread_min = {cfg.spread_min}")
        lines.append(f"_spread_max = {cfg.spread_max}")
    if cfg.min_bet_doubles_late and not cfg.structure.is_limit:
        lines.append("_min_bet_doubles_late = true")
        lines.append(f"_big_bet = {cfg.big_bet}")
    lines.append(f"_rake_percentage = {_fraction(cfg.rake_percent)}")
    cap = cfg.rake_cap(len(state.seats))
    if cap is not None:
        lines.append(f"_rake_cap = {cap}")
    lines.append(f"_rake_no_flop_no_drop = {_toml(cfg.no_flop_no_drop)}")
    lines.append(f"_rake = {0 if result is None else result.rake}")
    if protected:
        lines.append("_allin_protection = true")
    if state.kill is not None:
        lines.append("_kill = true")
        lines.append(f"_kill_seat = {_toml(state.kill.seat)}")
        lines.append(f"_kill_multiplier = {_toml(state.limits.multiplier)}")
    if state.overblinder is not None:
        lines.append("_overblind = true")
        lines.append(f"_overblind_seat = {state.seats[state.overblinder]}")
    if state.kill is not None or state.overblinder is not None:
        lines.append(f"_small_blind = {cfg.small_blind}")
        lines.append(f"_big_blind = {cfg.big_blind}")
    if result is not None and result.chopped:
        lines.append("_chop = true")
    if state.blind_shortfall:
        lines.append("_short_blind = true")
    if over_cap:
        lines.append("_short_all_in_cap = true")
    if cfg.run_it_twice:
        lines.append("_run_it_twice = true")
    if state.run_twice is not None and state.run_twice.runs == 2:
        lines.append("_run_twice = true")
    if state.deck_commitment is not None:
        lines.append(f"_deck_commitment = {_toml(state.deck_commitment)}")
    lines.append(f'_deck = "{cards_str(state.deck)}"')
    if meta.salt is not None:
        lines.append(f"_salt = {_toml(meta.salt)}")


def _fraction(basis_points: int) -> str:
    """Basis points written as a TOML decimal fraction (500 -> 0.05), never a float."""
    whole, part = divmod(basis_points, _BASIS)
    return f"{whole}.{part:04d}".rstrip("0").rstrip(".") + ("" if part else ".0")


def _ints(values: list[int]) -> str:
    """TOML text of a list of the engine's ints: what Python writes for it, "[1, 2]"."""
    return repr(values)


def _toml(value: Any) -> str:
    """TOML text of the few value types a PHH file holds (ints, bools, strings, lists)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} to PHH")


# ---------------------------------------------------------------------------------------
# Import and replay
# ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class PhhHand:
    """A PHH file read into what the engine needs to play it again.

    ``fields`` keeps every field of the file; ``actions`` its action lines; ``board`` the
    cards of its ``d db`` lines, in order; ``plays`` the lines the replay acts on, read
    (``(index, line, play)``, see :data:`Play`).
    """

    fields: dict[str, Any]
    config: TableConfig
    seats: list[SeatEntry]
    button: int
    deck: list[int]
    kill: KillInfo | None
    actions: list[str] = field(default_factory=list)
    board: list[int] = field(default_factory=list)
    plays: list[tuple[int, str, Play]] = field(default_factory=list)


def parse_phh(text: str) -> PhhHand:
    """Read a PHH text into the configuration, seats and deck of our engine."""
    try:
        data = tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as exc:
        raise PhhError(f"not a PHH (TOML) file: {exc}") from None
    for name in ("variant", "antes", "starting_stacks", "actions"):
        if name not in data:
            raise PhhError(f"the required field {name!r} is missing")
    variant = data["variant"]
    if variant not in _VARIANTS:
        raise PhhError(f"variant {variant!r} is not a game of this room")
    game, structure = _VARIANTS[variant]
    if data.get("_structure") == "SL":
        if structure is not Structure.FL:
            raise PhhError("spread limit (_structure = 'SL') needs a fixed-limit variant code")
        structure = Structure.SL
    stacks = _amounts(data, "starting_stacks")
    n = len(stacks)
    if not 2 <= n <= 10:
        raise PhhError(f"a hand needs 2 to 10 players, not {n}")
    seat_numbers = _amounts(data, "seats") if "seats" in data else list(range(1, n + 1))
    if len(seat_numbers) != n or sorted(seat_numbers) != _rotation_to_sorted(seat_numbers):
        raise PhhError("'seats' must list one seat per player, clockwise from the button's left")
    players = data.get("players") or [f"p{k}" for k in range(1, n + 1)]
    if len(players) != n:
        raise PhhError("'players' must name one player per starting stack")
    antes = _amounts(data, "antes")
    if len(antes) != n or len(set(antes)) > 1:
        raise PhhError("'antes' must give the same ante for every player")
    blinds = _amounts(data, "blinds_or_straddles") if "blinds_or_straddles" in data else []
    if len(blinds) != n:
        raise PhhError("'blinds_or_straddles' must give one amount per player")
    # blinds[0] and blinds[1] are the small and big blind (heads-up too, where PHH lists
    # the button's small blind first); from three players on, blinds[k] is player k's.
    small_blind = _int(data.get("_small_blind", blinds[0]), "_small_blind")
    big_blind = _int(data.get("_big_blind", blinds[1]), "_big_blind")
    # A newcomer's big blind: negative (pokerkit's post bet), or positive as this room's
    # older files have it (which pokerkit reads as a straddle).
    newcomer = (-big_blind, big_blind)
    if min(blinds) < 0 and any(b < 0 and (k < 2 or b != -big_blind) for k, b in enumerate(blinds)):
        raise PhhError("a post bet (a negative blind) must be a newcomer's big blind")
    if structure.is_limit:
        bets = {"small_bet": _int(data.get("small_bet"), "small_bet")}
        bets["big_bet"] = _int(data.get("big_bet"), "big_bet")
        if structure is Structure.SL:
            bets["spread_min"] = _int(data.get("_spread_min"), "_spread_min")
            bets["spread_max"] = _int(data.get("_spread_max"), "_spread_max")
    else:
        if _int(data.get("min_bet"), "min_bet") != big_blind:
            raise PhhError("in pot and no limit the minimum bet must be the big blind")
        bets = {}
        if data.get("_min_bet_doubles_late"):
            bets["big_bet"] = _int(data.get("_big_bet"), "_big_bet")
    special = {data.get("_overblind_seat"), data.get("_kill_seat")} - {None}
    straddle = n >= 3 and blinds[2] == 2 * big_blind and seat_numbers[2] not in special
    kill: KillInfo | None = None
    if data.get("_kill"):
        multiplier = _KILL_MULTIPLIERS.get(str(data.get("_kill_multiplier")))
        if multiplier is None:
            raise PhhError("'_kill_multiplier' must be '2' or '1.5'")
        kill = KillInfo(_int(data.get("_kill_seat"), "_kill_seat"), multiplier)
    rake_percent = _basis_points(data.get("_rake_percentage", Decimal(0)))
    chop = bool(data.get("_chop", False))
    config = _table_config(
        game=game,
        structure=structure,
        big_blind=big_blind,
        small_blind=small_blind,
        ante=antes[0],
        min_bet_doubles_late=bool(data.get("_min_bet_doubles_late", False)),
        allow_straddle=straddle,
        allow_chop=chop,
        kill=KillMode.NONE if kill is None else kill.multiplier,
        allow_overblind=bool(data.get("_overblind", False)),
        rake_percent=rake_percent,
        rake_caps=((2, _int(data["_rake_cap"], "_rake_cap")),) if "_rake_cap" in data else (),
        no_flop_no_drop=bool(data.get("_rake_no_flop_no_drop", False)),
        run_it_twice=bool(data.get("_run_it_twice", False)),
        **bets,
    )
    actions = data["actions"]
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise PhhError("'actions' must be a list of strings")
    holes, board, shown, plays = _read_actions(actions, n)
    overblind_seat = data.get("_overblind_seat")
    seats = [
        SeatEntry(
            seat=seat_numbers[k],
            player=str(players[k]),
            stack=stacks[k],
            posts_big_blind=k > 1 and blinds[k] in newcomer and seat_numbers[k] not in special,
            straddle=k == 2 and straddle,
            overblind=seat_numbers[k] == overblind_seat,
            chop=chop and k < 2,
            auto_muck=k not in shown,
        )
        for k in range(n)
    ]
    deck = _deck(data, holes, board, n)
    return PhhHand(
        fields=data,
        config=config,
        seats=seats,
        button=seat_numbers[-1],
        deck=deck,
        kill=kill,
        actions=list(actions),
        board=board,
        plays=plays,
    )


def _table_config(**settings: Any) -> TableConfig:
    """The table configuration of these settings, checked."""
    config = TableConfig(**settings)
    try:
        config.validate()
    except errors.ConfigError as exc:
        raise PhhError(f"the file's table settings cannot be played: {exc}") from None
    return config


def replay_phh(text: str) -> tuple[HandState, str]:
    """Play a PHH file's actions through the engine; return the final state and its PHH.

    The returned PHH is the engine's own export of the hand (finishing stacks, winnings
    and rake computed here) with the file's descriptive fields kept.
    """
    hand = parse_phh(text)
    data = hand.fields
    try:
        state, events = start_hand(
            hand.config,
            hand.seats,
            button=hand.button,
            deck=hand.deck,
            hand_id=str(data.get("hand", "")),
            kill=hand.kill,
            deck_commitment=data.get("_deck_commitment"),
        )
    except errors.SetupError as exc:
        raise PhhError(f"the hand cannot start: {exc}") from None
    # PHH player k (1-based) is the k-th seat of the file, which lists them clockwise
    # from the button's left, exactly the engine's player order rotated.
    seat_of = dict(zip(_PLAYER_NAMES, [entry.seat for entry in hand.seats], strict=False))
    board_seen = 0
    second_seen = 0  # cards of the second run checked so far
    index, line = 0, ""
    try:
        for index, line, (verb, player, number, timeout) in hand.plays:
            if verb == "db2":
                # The engine dealt both runs on the last answer: its second run's cards.
                dealt = [
                    c for e in events if isinstance(e, DealtBoard) and e.run == 2 for c in e.cards
                ]
                said = hand.board[board_seen : board_seen + number]
                if dealt[second_seen : second_seen + number] != said:
                    raise PhhReplayError(index, line, "the engine dealt other second-run cards")
                board_seen += number
                second_seen += number
                continue
            if verb == "db":
                # This line's cards, as parse_phh read them (``number`` of them).
                end = board_seen + number
                if state.board[board_seen:end] != hand.board[board_seen:end]:
                    raise PhhReplayError(index, line, "the engine dealt other board cards")
                board_seen = end
                continue
            seat = _seat(seat_of, player, index, line)
            if verb == "cc":
                if timeout:
                    action = Action.timeout(seat)
                else:
                    # A check unless the seat has chips to call (not their turn: the
                    # engine refuses the check).
                    i = state.actor_index
                    checks = i is None or state.seats[i] != seat or not state.to_call(i)
                    action = Action.check(seat) if checks else Action.call(seat)
            elif verb == "f":
                if timeout:
                    action = Action.timeout(seat, protection_allowed=False)
                else:
                    action = Action.fold(seat)
            elif verb == "cbr":
                action = Action.bet_raise(seat, number)
            elif verb == "sm":
                continue  # the engine decides who shows; the file's choices set auto-muck
            elif verb == "protected":
                action = Action.timeout(seat)
            elif verb == "rit":
                agree = bool(number)
                action = Action.timeout(seat) if timeout else Action.run_twice(seat, agree=agree)
            else:
                raise PhhReplayError(index, line, "not an action of these games")
            more = apply_in_place(state, action)
            events += more
            if timeout and verb != "rit":  # (an answer's timeout is a refusal)
                _check_timeout(more, verb, index, line)
    except errors.IllegalAction as exc:
        raise PhhReplayError(index, line, exc.reason) from None
    if not state.over:
        raise PhhReplayError(len(hand.actions), "", "the actions end before the hand is over")
    meta = PhhMeta(
        table=data.get("table"),
        seat_count=data.get("seat_count"),
        time=_time(data),
        currency=data.get("currency"),
        salt=data.get("_salt"),
    )
    return state, export_phh(state, events, meta)


def _check_timeout(events: list[Event], verb: str, index: int, line: str) -> None:
    """Refuse a timeout that the engine resolved otherwise than the file says (a check
    for ``cc``, a fold for ``f``, all-in protection): the engine decides it from the
    rules."""
    said = _TIMEOUT_RESOLUTIONS[verb]
    resolved = next(e.resolution for e in events if isinstance(e, TimedOut))
    if resolved != said:
        raise PhhReplayError(
            index, line, f"the engine resolves this timeout as {resolved}, not {said}"
        )


def _seat(seat_of: dict[str, int], player: str, index: int, line: str) -> int:
    """Seat of PHH player ``player`` (raise PhhReplayError if there is none).

    ``seat_of`` is keyed by the usual names ("p3"); any other spelling is read as before:
    a first character that is not checked, then the number ("p03", "x3").
    """
    seat = seat_of.get(player)
    if seat is None:
        digits = player[1:]
        if not digits.isdigit() or f"p{int(digits)}" not in seat_of:
            raise PhhReplayError(index, line, "no such player")
        seat = seat_of[f"p{int(digits)}"]
    return seat


def _split(line: str) -> tuple[list[str], str | None]:
    """Words of an action line and its comment (text after ``#``), if any."""
    action, sep, comment = line.partition("#")
    return action.split(), comment.strip() if sep else None


def _read_actions(
    actions: list[str], n: int
) -> tuple[dict[int, list[int]], list[int], set[int], list[tuple[int, str, Play]]]:
    """Hole cards by player index, the board in order, the players who showed, and the
    lines the replay acts on (``(index, line, play)``), in one pass over the lines."""
    holes: dict[int, list[int]] = {}
    board: list[int] = []
    shown: set[int] = set()
    plays: list[tuple[int, str, Play]] = []
    for index, line in enumerate(actions):
        play = _read_line(index, line, n, holes, board, shown)
        if play is not None:
            plays.append((index, line, play))
    return holes, board, shown, plays


def _read_line(
    index: int,
    line: str,
    n: int,
    holes: dict[int, list[int]],
    board: list[int],
    shown: set[int],
) -> Play | None:
    """Read an action line: add its dealt or shown cards to ``holes``, ``board`` or
    ``shown``; return its play, None if the replay has nothing to do with it (hole
    cards, other dealer lines, comments)."""
    words, comment = _split(line)
    try:
        if len(words) == 4:
            if words[0] == "d" and words[1] == "dh":
                k = int(words[2][1:]) - 1
                if not 0 <= k < n or "?" in words[3]:
                    raise ValueError("unknown player or card")
                holes.setdefault(k, []).extend(parse_cards(words[3]))
        elif len(words) == 3:
            if words[0] == "d" and words[1] == "db":
                board += parse_cards(words[2])
                return "db", "", len(words[2]) // 2, False
            if words[1] == "sm" and words[2] != "-":
                shown.add(int(words[0][1:]) - 1)
    except ValueError as exc:
        raise PhhReplayError(index, line, str(exc)) from None
    if not words:
        return _read_comment(index, line, comment or "", board)
    if words[0] == "d":
        return None  # hole cards were checked when the deck was built
    verb = words[1] if len(words) > 1 else ""
    timeout = comment is not None and comment.startswith("timeout")
    if verb == "f" or (verb == "cc" and len(words) == 2):
        return verb, words[0], 0, timeout
    if verb == "cbr" and len(words) == 3 and words[2].isdecimal():
        return verb, words[0], int(words[2]), False
    # A show (the engine decides who shows; the file's choices set auto-muck), or not an
    # action of these games (refused once the player is known to exist).
    return ("sm" if verb == "sm" else ""), words[0], 0, False


def _read_comment(index: int, line: str, comment: str, board: list[int]) -> Play | None:
    """The play of a comment line: all-in protection, an answer to run it twice, the
    second run's cards (added to ``board``); None for any other comment."""
    if match := _PROTECTED.match(comment):
        return "protected", f"p{match.group(1)}", 0, True
    if match := _RUN_TWICE.match(comment):
        return "rit", f"p{match.group(1)}", match.group(2) == "agrees", bool(match.group(3))
    if match := _SECOND_RUN.match(comment):
        try:
            cards = parse_cards(match.group(1))
        except ValueError as exc:
            raise PhhReplayError(index, line, str(exc)) from None
        board += cards
        return "db2", "", len(cards), False
    return None


def _deck(data: dict[str, Any], holes: dict[int, list[int]], board: list[int], n: int) -> list[int]:
    """The deck of the hand: ``_deck`` (checked against its commitment) or one built
    from the dealt cards in the engine's dealing order (one at a time from the small
    blind: ``p1``, heads-up ``p2``), the board right after the hole cards."""
    # Deal position of PHH player k: the small blind is p1, heads-up p2 (the button).
    first = 1 if n == 2 else 0
    dealt_order = [(first + p) % n for p in range(n)]
    if "_deck" in data:
        text = data["_deck"]
        try:
            deck = parse_cards(text)
        except ValueError as exc:
            raise PhhError(f"'_deck': {exc}") from None
        commitment, salt = data.get("_deck_commitment"), data.get("_salt")
        if commitment and salt and deck_commitment(deck, salt) != commitment:
            raise PhhError("'_deck' and '_salt' do not match '_deck_commitment'")
        for p, k in enumerate(dealt_order):
            cards = holes.get(k, [])
            # One card a round to each deal position: deck[p], deck[p + n]...
            if deck[p : p + len(cards) * n : n] != cards:
                raise PhhError(f"the hole cards of p{k + 1} are not those of '_deck'")
        return deck
    per_player = {len(cards) for cards in holes.values()}
    if len(holes) != n or len(per_player) != 1:
        raise PhhError("every player's hole cards must be known to replay the hand")
    (count,) = per_player
    deck = [holes[k][r] for r in range(count) for k in dealt_order] + board
    if len(set(deck)) != len(deck):
        raise PhhError("a card is dealt twice")
    used = set(deck)
    return deck + [c for c in range(52) if c not in used]


def _rotation_to_sorted(seats: list[int]) -> list[int]:
    """``seats`` rotated to start at its smallest seat (sorted iff it was clockwise)."""
    start = seats.index(min(seats))
    return seats[start:] + seats[:start]


def _amounts(data: dict[str, Any], name: str) -> list[int]:
    """The field ``name``: a list of integer amounts (cents)."""
    values = data[name]
    if not isinstance(values, list):
        raise PhhError(f"{name!r} must be a list")
    return [_int(v, name) for v in values]


def _int(value: Any, name: str) -> int:
    """An integer amount (cents); PHH files with fractional amounts are refused."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise PhhError(f"{name!r} must be an integer number of cents")
    if isinstance(value, Decimal):
        if value != value.to_integral_value():
            raise PhhError(f"{name!r} must be an integer number of cents, not {value}")
        return int(value)
    return value


def _basis_points(value: Any) -> int:
    """A rake fraction (0.05) as basis points (500), exactly."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise PhhError("'_rake_percentage' must be a number between 0 and 1")
    bp = Decimal(value) * _BASIS
    if bp != bp.to_integral_value() or not 0 <= bp <= _BASIS:
        raise PhhError("'_rake_percentage' must be between 0 and 1 in steps of 0.0001")
    return int(bp)


def _time(data: dict[str, Any]) -> datetime.datetime | None:
    """The hand's time from ``time``/``day``/``month``/``year`` (UTC), if all present."""
    t = data.get("time")
    if t is None:
        return None
    if not isinstance(t, datetime.time) or not all(k in data for k in ("day", "month", "year")):
        return None
    return datetime.datetime(
        data["year"], data["month"], data["day"], t.hour, t.minute, t.second, tzinfo=datetime.UTC
    )
