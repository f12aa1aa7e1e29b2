"""Forms of the cashier page. Players type chips ("12.50"); the ledger gets cents (1250).

Each form carries a hidden idempotency key made when the page is drawn, so a double
click or a re-sent POST moves money once.
"""

import re
import uuid

from django import forms
from django.core.exceptions import ValidationError

CHIPS_RE = re.compile(r"^(\d{1,13})(?:\.(\d{1,2}))?$")


class ChipsField(forms.Field):
    """An amount of chips with at most two decimals, cleaned to integer cents.

    Parsed as text, never through float or Decimal. The cashier services decide what
    amounts they accept (at least 1 cent, at most their maximum).
    """

    widget = forms.TextInput(attrs={"inputmode": "decimal", "autocomplete": "off"})

    def to_python(self, value: object) -> int | None:
        if value in self.empty_values:
            return None
        text = str(value).strip().replace(",", "")
        match = CHIPS_RE.match(text)
        if match is None:
            raise ValidationError(
                "Enter an amount like 25 or 12.50 (at most two decimals).", code="invalid"
            )
        whole, part = match.groups()
        return int(whole) * 100 + int((part or "").ljust(2, "0"))


class MoneyForm(forms.Form):
    amount = ChipsField(label="Amount (chips)")
    idempotency_key = forms.UUIDField(widget=forms.HiddenInput)

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("initial", {"idempotency_key": uuid.uuid4()})
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
