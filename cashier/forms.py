"""Forms of the cashier page. Players type chips ("12.50", "12,50"); the ledger gets cents.

Each form carries a hidden idempotency key made when the page is drawn, so a double
click or a re-sent POST moves money once.
"""

import uuid

from django import forms
from django.core.exceptions import ValidationError

from cashier.money import ChipsTextInvalid, chips_parse


class ChipsField(forms.Field):
    """An amount of chips with at most two decimals, cleaned to integer cents.

    The decimal separator may be a point or a comma ("12,50" is 12.50, never 1250);
    thousands separators and non-ASCII digits are refused (see `cashier.money`).
    """

    widget = forms.TextInput(attrs={"inputmode": "decimal", "autocomplete": "off"})

    def to_python(self, value: object) -> int | None:
        if value in self.empty_values:
            return None
        try:
            return chips_parse(str(value))
        except ChipsTextInvalid as exc:
            raise ValidationError(exc.message, code=exc.code) from exc


class MoneyForm(forms.Form):
    amount = ChipsField(label="Amount (chips)")
    idempotency_key = forms.UUIDField(widget=forms.HiddenInput)

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("initial", {"idempotency_key": uuid.uuid4()})
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
