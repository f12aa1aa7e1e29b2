"""Issue #12, finding 3: "12,50" is twelve chips fifty, never 1,250 chips.

The cashier form stripped commas, so a Spanish or Italian player who typed 12,50 asked
for a withdrawal of 1250.00; and `\\d` let full-width and Arabic-Indic digits through.
Now the one separator allowed is the decimal one, a point or a comma; thousands
separators are refused (never guessed), and so are digits other than 0-9.
"""

import pytest

from cashier.audit import ledger_audit
from cashier.models import Withdrawal
from cashier.money import (
    CHIPS_DIGITS_MESSAGE,
    CHIPS_FORMAT_MESSAGE,
    CHIPS_GROUPED_MESSAGE,
    ChipsTextInvalid,
    chips_parse,
)
from cashier.selectors import wallet_balance

KEY = "6f1b2d1e-3c3f-4d4b-9a51-00000000{:04d}"


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("12,50", 1_250),
        ("12.50", 1_250),
        ("12,5", 1_250),
        ("12.5", 1_250),
        ("0,01", 1),
        ("25", 2_500),
        (" 7,25 ", 725),
        ("1234,50", 123_450),
    ],
)
def test_a_point_or_a_comma_is_the_decimal_separator(text, cents):
    assert chips_parse(text) == cents


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,234", CHIPS_GROUPED_MESSAGE),  # 1234 or 1.234? Refused, not guessed
        ("1.234", CHIPS_GROUPED_MESSAGE),
        ("1,234.50", CHIPS_GROUPED_MESSAGE),
        ("1.234,50", CHIPS_GROUPED_MESSAGE),
        ("1,234,567", CHIPS_GROUPED_MESSAGE),
        ("12,505", CHIPS_GROUPED_MESSAGE),
        ("\uff11\uff12", CHIPS_DIGITS_MESSAGE),  # full-width 12
        ("\u0661\u0662,\u0665\u0660", CHIPS_DIGITS_MESSAGE),  # Arabic-Indic 12,50
        ("1\u0662", CHIPS_DIGITS_MESSAGE),
        ("abc", CHIPS_FORMAT_MESSAGE),
        ("12,", CHIPS_FORMAT_MESSAGE),
        (",50", CHIPS_FORMAT_MESSAGE),
        ("-5", CHIPS_FORMAT_MESSAGE),
        ("1 234,50", CHIPS_FORMAT_MESSAGE),
    ],
)
def test_ambiguous_and_foreign_amounts_are_refused_with_a_reason(text, message):
    with pytest.raises(ChipsTextInvalid) as refusal:
        chips_parse(text)
    assert refusal.value.message == message


def form(prefix: str, amount: str, n: int = 1) -> dict:
    return {f"{prefix}-amount": amount, f"{prefix}-idempotency_key": KEY.format(n)}


@pytest.mark.django_db
def test_a_deposit_of_12_comma_50_is_12_50(client, player):
    client.force_login(player)
    response = client.post("/cashier/deposit/", form("deposit", "12,50"), follow=True)
    assert b"Deposited 12.50." in response.content
    assert wallet_balance(user=player) == 1_250
    assert ledger_audit().ok


@pytest.mark.django_db
def test_a_withdrawal_of_12_comma_50_is_12_50_not_1250(client, player, fund):
    fund(player, 200_000)
    client.force_login(player)
    response = client.post("/cashier/withdraw/", form("withdraw", "12,50"), follow=True)
    assert b"Withdrawal requested: 12.50." in response.content
    assert Withdrawal.objects.get(user=player).amount == 1_250  # the old code: 125,000
    assert wallet_balance(user=player) == 198_750
    assert ledger_audit().ok


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("prefix", "amount", "message"),
    [
        ("deposit", "1,234.50", CHIPS_GROUPED_MESSAGE),
        ("deposit", "1.234,50", CHIPS_GROUPED_MESSAGE),
        ("withdraw", "1,250", CHIPS_GROUPED_MESSAGE),
        ("deposit", "\uff11\uff12", CHIPS_DIGITS_MESSAGE),
        ("withdraw", "\u0661\u0662", CHIPS_DIGITS_MESSAGE),
    ],
)
def test_the_forms_refuse_ambiguous_and_non_ascii_amounts(
    client, player, fund, prefix, amount, message
):
    fund(player, 200_000)
    client.force_login(player)
    response = client.post(f"/cashier/{prefix}/", form(prefix, amount))
    assert response.status_code == 400
    assert message.encode() in response.content
    assert wallet_balance(user=player) == 200_000
    assert not Withdrawal.objects.exists()
    assert ledger_audit().ok
