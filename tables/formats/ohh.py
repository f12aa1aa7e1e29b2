"""A finished hand in the Open Hand History JSON (PokerTracker's standard, spec 1.4.6).

``{"ohh": {...}}`` with the standard's fields: the players (``id`` is the seat number),
the rounds (Preflop, Flop, Turn, River, then Showdown when hands were shown or mucked)
with numbered actions, and the pots with their rake and each player's winnings.

Room choices, documented in the README:

- Amounts are decimal currency units, as the standard and the tracking software that
  imports it expect: the room's integer cents are converted here, at the edge, exactly
  (``Decimal``; JSON renders them as numbers such as 5.7).
- ``bet_type`` is ``FL`` for fixed and spread limit, ``PL`` or ``NL``; ``bet_cap`` is 0.
- A "Raise" amount is the chips the player put in with the raise, as the standard says.
- "Dealt Cards" actions carry the reader's own cards (everyone's for an auditor) and
  are left out for the other players, whose shown cards are in "Shows Cards". "Mucks
  Cards" carries the cards for their owner and auditors only. A straddle is "Straddle";
  a newcomer's big blind, a kill blind or an overblind is "Post Extra Blind".
- Timeouts, all-in protection and returned uncalled bets have no OHH action; the
  resulting folds, checks and pot amounts are in the history.
- A hand run twice has the ``Run_It_Twice`` flag; the second run's streets follow the
  first run's as rounds of their own, and each pot's winnings add up both runs.
"""

import datetime
from decimal import Decimal
from typing import Any

from tables.engine.cards import card_str
from tables.engine.events import Acted, DealtBoard, HoleCards, Mucked, Posted, Shown, Won
from tables.formats import HandRecord

SPEC_VERSION = "1.4.6"
GAME_TYPES = {"holdem": "Holdem", "omaha": "Omaha", "omaha8": "OmahaHiLo"}
BET_TYPES = {"FL": "FL", "SL": "FL", "PL": "PL", "NL": "NL"}
POST_ACTIONS = {
    "ante": "Post Ante",
    "small_blind": "Post SB",
    "big_blind": "Post BB",
    "newcomer_big_blind": "Post Extra Blind",
    "straddle": "Straddle",
    "kill_blind": "Post Extra Blind",
    "overblind": "Post Extra Blind",
}
ACTIONS = {"fold": "Fold", "check": "Check", "call": "Call", "bet": "Bet", "raise": "Raise"}
STREETS = {"flop": "Flop", "turn": "Turn", "river": "River"}


def units(cents: int) -> Decimal:
    """Integer cents as exact currency units (570 -> 5.70)."""
    return Decimal(cents).scaleb(-2)


def hand_to_ohh(record: HandRecord, *, site_name: str) -> dict[str, Any]:
    """The OHH object of a finished hand, as ``record``'s reader may see it."""
    state = record.state
    config = state.config
    result = state.result
    if result is None:
        raise ValueError("only a finished hand has a hand history")
    rounds: list[dict[str, Any]] = []
    numbered = 0

    def add(round_: dict[str, Any], action: dict[str, Any]) -> None:
        nonlocal numbered
        numbered += 1
        round_["actions"].append({"action_number": numbered, **action})

    current: dict[str, Any] = {"id": 0, "street": "Preflop", "cards": [], "actions": []}
    rounds.append(current)
    for e in record.events:
        if isinstance(e, Posted):
            add(
                current,
                {
                    "player_id": e.seat,
                    "action": POST_ACTIONS[e.kind],
                    "amount": units(e.amount),
                    "is_allin": e.all_in,
                },
            )
        elif isinstance(e, HoleCards):
            cards = record.dealt_cards(e.seat)
            if cards is not None:
                add(
                    current,
                    {
                        "player_id": e.seat,
                        "action": "Dealt Cards",
                        "cards": [card_str(c) for c in cards],
                    },
                )
        elif isinstance(e, Acted):
            add(
                current,
                {
                    "player_id": e.seat,
                    "action": ACTIONS[e.action],
                    "amount": units(e.amount),
                    "is_allin": e.all_in,
                },
            )
        elif isinstance(e, DealtBoard):
            current = {
                "id": len(rounds),
                "street": STREETS[e.street],
                "cards": [card_str(c) for c in e.cards],
                "actions": [],
            }
            rounds.append(current)
        elif isinstance(e, Shown | Mucked) and (isinstance(e, Mucked) or e.run == 1):
            if current["street"] != "Showdown":
                current = {"id": len(rounds), "street": "Showdown", "cards": [], "actions": []}
                rounds.append(current)
            if isinstance(e, Shown):
                action = {"action": "Shows Cards", "cards": [card_str(c) for c in e.cards]}
            else:
                action = {"action": "Mucks Cards"}
                mucked = record.known_cards(e.seat)
                if mucked is not None:
                    action["cards"] = [card_str(c) for c in mucked]
            add(current, {"player_id": e.seat, **action})
    return {
        "ohh": {
            "spec_version": SPEC_VERSION,
            "site_name": site_name,
            "network_name": site_name,
            "internal_version": SPEC_VERSION,
            "tournament": False,
            "game_number": str(record.hand_id),
            "start_date_utc": record.started_at.astimezone(datetime.UTC).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            ),
            "table_name": record.table_name,
            "game_type": GAME_TYPES[str(config.game)],
            "bet_limit": {"bet_type": BET_TYPES[str(config.structure)], "bet_cap": 0},
            "table_size": record.seat_count,
            "currency": record.currency,
            "dealer_seat": state.button,
            "small_blind_amount": units(config.small_blind),
            "big_blind_amount": units(config.big_blind),
            "ante_amount": units(config.ante),
            "hero_player_id": record.hero,
            "flags": ["Run_It_Twice"]
            if state.run_twice is not None and state.run_twice.runs == 2
            else [],
            "players": [
                {
                    "id": seat,
                    "seat": seat,
                    "name": record.player(seat),
                    "display": record.player(seat),
                    "starting_stack": units(stack),
                }
                for seat, stack in zip(state.seats, state.starting_stacks, strict=True)
            ],
            "rounds": rounds,
            "pots": _pots(record),
        }
    }


def _pots(record: HandRecord) -> list[dict[str, Any]]:
    """Each pot before rake, the rake taken from it, and who won how much of it."""
    result = record.state.result
    if result is None:
        return []
    wins: dict[int, dict[int, int]] = {}
    for e in record.events:
        if isinstance(e, Won):
            by_seat = wins.setdefault(e.pot, {})
            by_seat[e.seat] = by_seat.get(e.seat, 0) + e.amount
    pots = []
    for k, pot in enumerate(result.pots):
        won = wins.get(k, {})
        pots.append(
            {
                "number": k,
                "amount": units(pot.amount),
                "rake": units(pot.amount - sum(won.values())),
                "jackpot": 0,
                "player_wins": [
                    {"player_id": seat, "win_amount": units(amount)} for seat, amount in won.items()
                ],
            }
        )
    return pots
