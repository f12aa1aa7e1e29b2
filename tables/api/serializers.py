"""Serializers of the hand-history API: parse the filters, present hands. Nothing more.

The hand record is built from a `tables.history_selectors.HandAccess`, which already
knows what its reader may see (hole cards, events, deck and salt).
"""

from collections.abc import Sequence
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tables.engine.cards import card_str
from tables.engine.state import HandState
from tables.history_selectors import HandAccess, HandFilters
from tables.models import Game, Hand

MAX_ID = 2**63 - 1


class HandFilterSerializer(serializers.Serializer):
    table = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    stake_level = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    game = serializers.ChoiceField(choices=Game.choices, required=False)
    player = serializers.CharField(
        required=False,
        max_length=150,
        help_text="A screen name as the player was called in the hand, exactly as written.",
    )
    player_id = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="A player's user id: their hands whatever they were called.",
    )
    since = serializers.DateTimeField(
        required=False, help_text="Hands started at or after (ISO 8601)."
    )
    until = serializers.DateTimeField(required=False, help_text="Hands started before.")

    def filters(self) -> HandFilters:
        return HandFilters(**self.validated_data)


class ExportFilterSerializer(HandFilterSerializer):
    format = serializers.ChoiceField(
        choices=[("phh", "PHH (.phhs, one [section] per hand)"), ("text", "PokerStars text")],
        default="phh",
    )

    def filters(self) -> HandFilters:
        data = {k: v for k, v in self.validated_data.items() if k != "format"}
        return HandFilters(**data)


class TableRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    seats = serializers.IntegerField(help_text="Seat count of the table (its 'max').")


class StakeRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class SeatedPlayerSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    user_id = serializers.IntegerField(help_text="Who played the seat (stable).")
    player = serializers.CharField(help_text="Their screen name then (display only).")


class HandSummarySerializer(serializers.ModelSerializer):
    table = serializers.SerializerMethodField()
    stake_level = serializers.SerializerMethodField()
    game = serializers.SerializerMethodField()
    structure = serializers.SerializerMethodField()
    players = serializers.SerializerMethodField()
    pot = serializers.SerializerMethodField(help_text="Cents, before rake.")

    class Meta:
        model = Hand
        fields = [
            "id",
            "number",
            "table",
            "stake_level",
            "game",
            "structure",
            "button",
            "players",
            "pot",
            "rake",
            "started_at",
            "ended_at",
        ]

    @extend_schema_field(TableRefSerializer)
    def get_table(self, hand: Hand) -> dict[str, Any]:
        return _table_ref(hand)

    @extend_schema_field(StakeRefSerializer)
    def get_stake_level(self, hand: Hand) -> dict[str, Any]:
        return _stake_ref(hand)

    def get_game(self, hand: Hand) -> str:
        return hand.state["config"]["game"]

    def get_structure(self, hand: Hand) -> str:
        return hand.state["config"]["structure"]

    @extend_schema_field(SeatedPlayerSerializer(many=True))
    def get_players(self, hand: Hand) -> list[dict[str, Any]]:
        # By the hand's `HandPlayer` rows (prefetched by the selectors), in seat order.
        return [
            {"seat": row.seat, "user_id": row.user_id, "player": row.screen_name}
            for row in sorted(hand.players.all(), key=lambda row: row.seat)
        ]

    def get_pot(self, hand: Hand) -> int:
        result = hand.state["result"] or {"pots": []}
        return sum(pot["amount"] for pot in result["pots"])


class SeatRecordSerializer(SeatedPlayerSerializer):
    starting_stack = serializers.IntegerField()
    final_stack = serializers.IntegerField()
    winnings = serializers.IntegerField(help_text="Cents taken from the pots (after rake).")
    contributed_rake = serializers.IntegerField(help_text="This player's share of the rake.")
    status = serializers.CharField(help_text="in, all_in, protected or folded at the end.")
    shown = serializers.BooleanField(help_text="Turned face up at showdown.")
    hole_cards = serializers.ListField(
        child=serializers.CharField(),
        allow_null=True,
        help_text="null when the reader may not see them.",
    )


class PotSerializer(serializers.Serializer):
    amount = serializers.IntegerField(help_text="Cents, before rake.")
    eligible = serializers.ListField(child=serializers.IntegerField())


class EventRecordSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    type = serializers.CharField()
    at = serializers.DateTimeField(source="created_at")
    data = serializers.DictField(help_text="The engine event (tables/engine/events.py).")


class HandDetailSerializer(serializers.Serializer):
    """The whole record of one hand as its reader may see it."""

    id = serializers.IntegerField()
    number = serializers.IntegerField()
    table = TableRefSerializer()
    stake_level = StakeRefSerializer()
    rules = serializers.DictField(help_text="The rules the hand was played under.")
    game = serializers.CharField()
    structure = serializers.CharField()
    limits = serializers.DictField(help_text="Limits in force (after a kill or overblind).")
    button = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField()
    seats = SeatRecordSerializer(many=True)
    board = serializers.ListField(child=serializers.CharField())
    boards = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Each run's whole board: the board, or both when it was run twice.",
    )
    pots = PotSerializer(many=True)
    rake = serializers.IntegerField()
    chopped = serializers.BooleanField()
    events = EventRecordSerializer(many=True)
    deck_commitment = serializers.CharField()
    deck = serializers.ListField(
        child=serializers.CharField(), allow_null=True, help_text="Auditors only."
    )
    salt = serializers.CharField(allow_null=True, help_text="Auditors only.")
    verify_url = serializers.CharField()


def hand_detail_data(access: HandAccess, *, verify_url: str) -> dict[str, Any]:
    """The `HandDetailSerializer` input for one hand as ``access``'s reader may see it."""
    hand, state = access.hand, access.state
    result = state.result
    if result is None:
        raise ValueError("only a finished hand has a record")
    users = {row.seat: row.user_id for row in hand.players.all()}
    seats = []
    for i, seat in enumerate(state.seats):
        known = access.cards_known(seat)
        seats.append(
            {
                "seat": seat,
                "user_id": users[seat],
                "player": state.players[i],
                "starting_stack": state.starting_stacks[i],
                "final_stack": state.stacks[i],
                "winnings": result.winnings[i],
                "contributed_rake": result.contributed_rake[i],
                "status": str(state.status[i]),
                "shown": state.shown[i],
                "hole_cards": [card_str(c) for c in state.hole[i]] if known else None,
            }
        )
    return {
        "id": hand.id,
        "number": hand.number,
        "table": _table_ref(hand),
        "stake_level": _stake_ref(hand),
        "rules": hand.state["config"],
        "game": str(state.config.game),
        "structure": str(state.config.structure),
        "limits": state.limits.to_dict(),
        "button": hand.button,
        "started_at": hand.started_at,
        "ended_at": hand.ended_at,
        "seats": seats,
        "board": [card_str(c) for c in state.board],
        "boards": [[card_str(c) for c in board] for board in _boards(state)],
        "pots": [pot.to_dict() for pot in result.pots],
        "rake": result.rake,
        "chopped": result.chopped,
        "events": access.visible_rows(),
        "deck_commitment": hand.deck_commitment,
        "deck": [card_str(c) for c in state.deck] if access.auditor else None,
        "salt": hand.salt if access.auditor else None,
        "verify_url": verify_url,
    }


def _boards(state: HandState) -> list[Sequence[int]]:
    """The board of each run: one, or two when the board was run twice."""
    agreement = state.run_twice
    if agreement is not None and agreement.runs == 2:
        return [state.board, agreement.second_board]
    return [state.board]


def _table_ref(hand: Hand) -> dict[str, Any]:
    return {"id": hand.table.id, "name": hand.table.name, "seats": hand.table.seats}


def _stake_ref(hand: Hand) -> dict[str, Any]:
    stake = hand.table.stake_level
    return {"id": stake.id, "name": stake.name}


class VerifySerializer(serializers.Serializer):
    commitment = serializers.CharField()
    matches = serializers.BooleanField()
    algorithm = serializers.CharField()
