"""Serializers of the cashier API: parse and present, nothing more.

Amounts are JSON integers of cents: strings, fractions, booleans, zero, negatives and
anything above `MAX_AMOUNT` are refused by `amount_check`, the services' own rule.
"""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from cashier.exceptions import InvalidAmount
from cashier.models import AccountKind, LedgerEntry, LedgerTransaction, TransactionKind, Withdrawal
from cashier.services import amount_check


@extend_schema_field(OpenApiTypes.INT64)
class CentsField(serializers.Field):
    def to_internal_value(self, data: object) -> int:
        try:
            return amount_check(amount=data)
        except InvalidAmount as exc:
            raise serializers.ValidationError(exc.message, code=exc.code) from exc

    def to_representation(self, value: int) -> int:
        return value


class MoneyRequestSerializer(serializers.Serializer):
    amount = CentsField()
    account = serializers.IntegerField(
        required=False, help_text="Your wallet's id, if you want it checked."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # Refuse what we do not understand (a "user" or "to" field, say) rather than
        # silently moving money in some other way than the client meant.
        unexpected = sorted(set(self.initial_data) - set(self.fields))
        if unexpected:
            raise serializers.ValidationError(
                f"Unexpected fields: {', '.join(unexpected)}.", code="unexpected_field"
            )
        return attrs


class WalletSerializer(serializers.Serializer):
    account = serializers.IntegerField(allow_null=True, help_text="None before any movement.")
    balance = serializers.IntegerField(help_text="Cents.")
    pending_withdrawals = serializers.IntegerField(help_text="Cents held for withdrawals.")


class DepositSerializer(serializers.ModelSerializer):
    amount = serializers.SerializerMethodField()

    class Meta:
        model = LedgerTransaction
        fields = ["id", "kind", "amount", "created_at", "external_reference"]

    def get_amount(self, txn: LedgerTransaction) -> int:
        return txn.entries.filter(amount__gt=0).values_list("amount", flat=True).get()


class WithdrawalSerializer(serializers.ModelSerializer):
    class Meta:
        model = Withdrawal
        fields = ["id", "amount", "status", "created_at", "decided_at"]


class LedgerEntrySerializer(serializers.ModelSerializer):
    transaction = serializers.IntegerField(source="transaction_id")
    kind = serializers.CharField(source="transaction.kind")
    memo = serializers.CharField(source="transaction.memo")
    created_at = serializers.DateTimeField(source="transaction.created_at")
    hand_id = serializers.IntegerField(source="transaction.hand_id", allow_null=True)
    account = serializers.IntegerField(source="account_id")
    account_kind = serializers.CharField(source="account.kind")
    owner_id = serializers.IntegerField(
        source="account.user_id", allow_null=True, help_text="A wallet's player (user id)."
    )
    owner = serializers.CharField(
        source="account.user.username",
        default=None,
        allow_null=True,
        help_text="Their screen name now (display only).",
    )
    reference = serializers.CharField(
        source="account.reference",
        help_text="A table account's reference, as the tables layer chose it (``table:<id>``); "
        "empty for other accounts.",
    )

    class Meta:
        model = LedgerEntry
        fields = [
            "id",
            "transaction",
            "kind",
            "memo",
            "created_at",
            "hand_id",
            "account",
            "account_kind",
            "owner_id",
            "owner",
            "reference",
            "amount",
        ]


class LedgerPageSerializer(serializers.Serializer):
    """One page of `LedgerView` (the page-number pagination's envelope)."""

    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = LedgerEntrySerializer(many=True)


class LedgerFilterSerializer(serializers.Serializer):
    user = serializers.CharField(
        required=False, source="username", max_length=150, help_text="A screen name."
    )
    user_id = serializers.IntegerField(
        required=False, min_value=1, max_value=2**63 - 1, help_text="A player's user id."
    )
    account_kind = serializers.ChoiceField(choices=AccountKind.choices, required=False)
    kind = serializers.ChoiceField(
        choices=TransactionKind.choices, required=False, source="transaction_kind"
    )
    since = serializers.DateTimeField(required=False, help_text="Inclusive; ISO 8601.")
    until = serializers.DateTimeField(required=False, help_text="Exclusive; ISO 8601.")
