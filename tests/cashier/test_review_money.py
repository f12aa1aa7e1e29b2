"""Review of issue #12, findings 2 and 3, at the cashier: replayed keys and typed amounts.

An adversarial pass: the same key sent at once from several connections (committed,
real locks), one header for a deposit and a withdrawal, a deposit replayed after the
daily limit was used up or lowered, a withdrawal replayed after it was cancelled or
paid, bad headers; and every odd amount a player may type into the cashier page
(``0,001``, ``-1``, ``1e3``, `` 12,50 ``, ``12,``, ``,5``, the Arabic decimal separator,
NaN, Infinity, huge numbers), and the same as JSON over the API. A key moves money at
most once and a refusal moves nothing.
"""

import pytest
from django.test import override_settings

from cashier.audit import ledger_audit
from cashier.exceptions import InvalidAmount
from cashier.models import LedgerTransaction, TransactionKind, Withdrawal, WithdrawalStatus
from cashier.money import (
    CHIPS_DIGITS_MESSAGE,
    CHIPS_FORMAT_MESSAGE,
    CHIPS_GROUPED_MESSAGE,
    ChipsTextInvalid,
    chips_parse,
)
from cashier.selectors import wallet_balance
from cashier.services import MAX_AMOUNT, deposit_create, withdrawal_approve, withdrawal_cancel
from tests.concurrency import run_together
from tests.kit import UserFactory, api_for


def post(client, url, data, key="k"):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return client.post(url, data, format="json", **headers)


DEPOSITS, WITHDRAWALS = "/api/cashier/deposits/", "/api/cashier/withdrawals/"


# --- the same key at once ----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_one_deposit_key_sent_at_once_by_a_new_player_deposits_once():
    player = UserFactory()  # no wallet yet: the six requests race to create it too
    results = run_together([lambda: post(api_for(player), DEPOSITS, {"amount": 500})] * 6)
    assert [r.status_code for r in results] == [201] * 6, [r.content for r in results]
    assert len({r.json()["id"] for r in results}) == 1
    assert wallet_balance(user=player) == 500
    assert ledger_audit().ok


@pytest.mark.django_db(transaction=True)
def test_one_withdrawal_key_sent_at_once_holds_once():
    player = UserFactory()
    deposit_create(user=player, amount=1_000, idempotency_key="seed")
    results = run_together([lambda: post(api_for(player), WITHDRAWALS, {"amount": 300})] * 6)
    assert [r.status_code for r in results] == [201] * 6, [r.content for r in results]
    assert len({r.json()["id"] for r in results}) == 1
    assert Withdrawal.objects.filter(user=player).count() == 1
    assert wallet_balance(user=player) == 700
    assert ledger_audit().ok


# --- replays after the world changed -----------------------------------------------------


@pytest.mark.django_db
def test_a_deposit_replayed_after_the_daily_limit_was_reached_is_the_first_answer(player):
    api = api_for(player)
    with override_settings(CASHIER_DEPOSIT_DAILY_LIMIT=1_000):
        first = post(api, DEPOSITS, {"amount": 1_000}, key="d1")
        assert first.status_code == 201
        new = post(api, DEPOSITS, {"amount": 1}, key="d2")
        assert (new.status_code, new.json()["code"]) == (409, "deposit_limit_exceeded")
        again = post(api, DEPOSITS, {"amount": 1_000}, key="d1")
    with override_settings(CASHIER_DEPOSIT_DAILY_LIMIT=10):  # lowered below it since
        lowered = post(api, DEPOSITS, {"amount": 1_000}, key="d1")
    assert (again.status_code, again.json()) == (201, first.json())
    assert (lowered.status_code, lowered.json()) == (201, first.json())
    assert wallet_balance(user=player) == 1_000


@pytest.mark.django_db
def test_a_deposit_refused_by_the_limit_can_be_retried_with_its_key_once_allowed(player):
    api = api_for(player)
    with override_settings(CASHIER_DEPOSIT_DAILY_LIMIT=100):
        assert post(api, DEPOSITS, {"amount": 500}, key="d").status_code == 409
    with override_settings(CASHIER_DEPOSIT_DAILY_LIMIT=1_000):
        assert post(api, DEPOSITS, {"amount": 500}, key="d").status_code == 201
        assert post(api, DEPOSITS, {"amount": 500}, key="d").status_code == 201
    assert wallet_balance(user=player) == 500


@pytest.mark.django_db
def test_a_withdrawal_replayed_after_cancellation_is_that_withdrawal_and_holds_nothing(
    player, fund
):
    fund(player, 1_000)
    api = api_for(player)
    first = post(api, WITHDRAWALS, {"amount": 400}, key="w")
    assert first.status_code == 201
    withdrawal = Withdrawal.objects.get(pk=first.json()["id"])
    withdrawal_cancel(withdrawal=withdrawal, user=player)
    assert wallet_balance(user=player) == 1_000
    again = post(api, WITHDRAWALS, {"amount": 400}, key="w")
    assert again.status_code == 201
    assert (again.json()["id"], again.json()["status"]) == (withdrawal.pk, "cancelled")
    assert wallet_balance(user=player) == 1_000  # nothing held again
    assert Withdrawal.objects.filter(user=player).count() == 1
    other = post(api, WITHDRAWALS, {"amount": 401}, key="w")
    assert (other.status_code, other.json()["code"]) == (422, "idempotency_key_reused")
    assert ledger_audit().ok


@pytest.mark.django_db
def test_a_withdrawal_replayed_after_it_was_paid_holds_nothing_even_with_an_empty_wallet(
    player, fund, auditor
):
    fund(player, 400)
    api = api_for(player)
    first = post(api, WITHDRAWALS, {"amount": 400}, key="w")
    withdrawal_approve(withdrawal=Withdrawal.objects.get(pk=first.json()["id"]), decided_by=auditor)
    again = post(api, WITHDRAWALS, {"amount": 400}, key="w")
    assert (again.status_code, again.json()["status"]) == (201, "paid")
    assert wallet_balance(user=player) == 0
    assert ledger_audit().ok


@pytest.mark.django_db
def test_one_header_for_a_deposit_a_withdrawal_and_a_sit_is_three_requests(player):
    from tests.kit import TableFactory

    api = api_for(player)
    table = TableFactory()
    assert post(api, DEPOSITS, {"amount": 50_000}, key="same").status_code == 201
    assert post(api, WITHDRAWALS, {"amount": 1_000}, key="same").status_code == 201
    sat = post(api, f"/api/tables/{table.id}/seat", {"seat": 1, "buy_in": 10_000}, key="same")
    assert sat.status_code == 201, sat.json()
    keys = set(LedgerTransaction.objects.filter(user=player).values_list("kind", "idempotency_key"))
    assert keys == {
        (TransactionKind.DEPOSIT, f"api:{player.pk}:deposit:same"),
        (TransactionKind.WITHDRAWAL_REQUEST, f"api:{player.pk}:withdrawal:same"),
        (TransactionKind.BUY_IN, f"api:{player.pk}:sit:same"),
    }
    assert wallet_balance(user=player) == 50_000 - 1_000 - 10_000


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("key", "code"),
    [
        (None, "idempotency_key_missing"),
        ("", "idempotency_key_missing"),
        (" \t ", "idempotency_key_missing"),
        ("k" * 101, "idempotency_key_invalid"),
        ("cl\xe9", "idempotency_key_invalid"),
        ("\x7f", "idempotency_key_invalid"),
    ],
)
def test_bad_idempotency_headers_are_400_and_move_nothing(player, fund, key, code):
    fund(player, 1_000)
    for url in (DEPOSITS, WITHDRAWALS):
        answer = post(api_for(player), url, {"amount": 100}, key=key)
        assert (answer.status_code, answer.json()["code"]) == (400, code), answer.json()
    assert wallet_balance(user=player) == 1_000
    assert LedgerTransaction.objects.filter(user=player).count() == 1


@pytest.mark.django_db
def test_a_key_of_exactly_100_characters_is_accepted_and_replayed(player):
    api = api_for(player)
    key = "k:" * 50
    first = post(api, DEPOSITS, {"amount": 100}, key=key)
    again = post(api, DEPOSITS, {"amount": 100}, key=key)
    assert (first.status_code, again.status_code) == (201, 201)
    assert first.json()["id"] == again.json()["id"]


# --- amounts typed on the cashier page ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        (" 12,50 ", 1_250),
        ("\u00a012,50\u00a0", 1_250),  # a no-break space pasted around it
        ("12,5", 1_250),
        ("0,5", 50),
        ("0,05", 5),
        ("0012", 1_200),
        ("0", 0),  # the services refuse it (at least 1 cent)
        ("9" * 13, int("9" * 13) * 100),  # the services refuse it (above their maximum)
    ],
)
def test_review_amounts_that_parse(text, cents):
    assert chips_parse(text) == cents


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0,001", CHIPS_GROUPED_MESSAGE),
        ("0.001", CHIPS_GROUPED_MESSAGE),
        ("-1", CHIPS_FORMAT_MESSAGE),
        ("+1", CHIPS_FORMAT_MESSAGE),
        ("1e3", CHIPS_FORMAT_MESSAGE),
        ("1E3", CHIPS_FORMAT_MESSAGE),
        ("12,", CHIPS_FORMAT_MESSAGE),
        ("12.", CHIPS_FORMAT_MESSAGE),
        (",5", CHIPS_FORMAT_MESSAGE),
        ("\u066b", CHIPS_FORMAT_MESSAGE),  # the Arabic decimal separator alone
        ("12\u066b50", CHIPS_FORMAT_MESSAGE),
        ("12\uff0c50", CHIPS_FORMAT_MESSAGE),  # a full-width comma
        ("NaN", CHIPS_FORMAT_MESSAGE),
        ("nan", CHIPS_FORMAT_MESSAGE),
        ("Infinity", CHIPS_FORMAT_MESSAGE),
        ("-inf", CHIPS_FORMAT_MESSAGE),
        ("1_000", CHIPS_FORMAT_MESSAGE),
        ("0x10", CHIPS_FORMAT_MESSAGE),
        ("$12.50", CHIPS_FORMAT_MESSAGE),
        ("12.50 €", CHIPS_FORMAT_MESSAGE),
        ("1 000", CHIPS_FORMAT_MESSAGE),
        ("12\u200b", CHIPS_FORMAT_MESSAGE),  # a zero-width space is not whitespace
        ("", CHIPS_FORMAT_MESSAGE),
        ("9" * 14, CHIPS_FORMAT_MESSAGE),
        ("9" * 100_000, CHIPS_FORMAT_MESSAGE),
        ("\u00b2", CHIPS_DIGITS_MESSAGE),  # superscript two
        ("\u0967\u0968", CHIPS_DIGITS_MESSAGE),  # Devanagari 12
        ("\U0001d7d9", CHIPS_DIGITS_MESSAGE),  # mathematical double-struck 1
    ],
)
def test_review_amounts_that_are_refused_with_a_reason(text, message):
    with pytest.raises(ChipsTextInvalid) as refusal:
        chips_parse(text)
    assert refusal.value.message == message


def page_form(prefix: str, amount: str, key: str = "6f1b2d1e-3c3f-4d4b-9a51-000000000001"):
    return {f"{prefix}-amount": amount, f"{prefix}-idempotency_key": key}


@pytest.mark.django_db
@pytest.mark.parametrize("prefix", ["deposit", "withdraw"])
@pytest.mark.parametrize(
    ("amount", "says"),
    [
        ("0,001", CHIPS_GROUPED_MESSAGE),
        ("0", "at least 1 cent"),
        ("0,00", "at least 1 cent"),
        ("-1", CHIPS_FORMAT_MESSAGE),
        ("1e3", CHIPS_FORMAT_MESSAGE),
        ("NaN", CHIPS_FORMAT_MESSAGE),
        ("Infinity", CHIPS_FORMAT_MESSAGE),
        ("9" * 13, f"at most {MAX_AMOUNT} cents"),
        ("9" * 40, CHIPS_FORMAT_MESSAGE),
        ("\u066b", CHIPS_FORMAT_MESSAGE),
        ("", "This field is required."),
    ],
)
def test_the_cashier_page_refuses_odd_amounts_with_a_reason_and_moves_nothing(
    client, player, fund, prefix, amount, says
):
    fund(player, 10_000)
    client.force_login(player)
    response = client.post(f"/cashier/{prefix}/", page_form(prefix, amount))
    assert response.status_code == 400
    assert says.encode() in response.content
    assert wallet_balance(user=player) == 10_000
    assert not Withdrawal.objects.exists()


@pytest.mark.django_db
def test_the_cashier_page_reads_padded_comma_amounts_and_a_resent_form_moves_once(
    client, player, fund
):
    fund(player, 10_000)
    client.force_login(player)
    for _ in range(2):  # a double click: the same hidden key
        response = client.post("/cashier/withdraw/", page_form("withdraw", " 12,50 "))
        assert response.status_code == 302
    assert Withdrawal.objects.get(user=player).amount == 1_250
    assert wallet_balance(user=player) == 10_000 - 1_250


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["not-a-uuid", "", "hand:1:rake"])
def test_the_cashier_page_refuses_a_forged_key(client, player, key):
    client.force_login(player)
    response = client.post("/cashier/deposit/", page_form("deposit", "12,50", key=key))
    assert response.status_code == 400
    assert wallet_balance(user=player) == 0


# --- amounts sent as JSON to the API -----------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        '{"amount": NaN}',
        '{"amount": Infinity}',
        '{"amount": -Infinity}',
        '{"amount": 1e3}',
        '{"amount": 12.5}',
        '{"amount": "12,50"}',
        '{"amount": "1250"}',
        '{"amount": true}',
        '{"amount": -1}',
        '{"amount": 0}',
        '{"amount": 1000000000001}',
        '{"amount": 100000000000000000000000000000000000000000}',
        '{"amount": null}',
        '{"amount": [1]}',
        "{}",
    ],
)
def test_the_api_refuses_odd_json_amounts_with_a_400_and_moves_nothing(player, fund, body):
    fund(player, 10_000)
    for url in (DEPOSITS, WITHDRAWALS):
        answer = api_for(player).post(
            url, body, content_type="application/json", HTTP_IDEMPOTENCY_KEY="k"
        )
        assert answer.status_code == 400, (url, body, answer.content)
        assert answer.json()["code"], answer.json()
    assert wallet_balance(user=player) == 10_000
    assert not Withdrawal.objects.exists()


def test_amount_check_refuses_floats_that_look_whole():
    from cashier.services import amount_check

    for amount in (1.0, float("nan"), float("inf"), 1e3):
        with pytest.raises(InvalidAmount):
            amount_check(amount=amount)


@pytest.mark.django_db
def test_withdrawal_statuses_are_untouched_by_a_replay(player, fund):
    fund(player, 1_000)
    api = api_for(player)
    first = post(api, WITHDRAWALS, {"amount": 100}, key="x")
    post(api, WITHDRAWALS, {"amount": 100}, key="x")
    assert Withdrawal.objects.get(pk=first.json()["id"]).status == WithdrawalStatus.PENDING


# --- defect: a cashier page re-sent after the withdrawal was decided --------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("decide", "status"), [("cancel", "cancelled"), ("approve", "paid"), ("reject", "rejected")]
)
def test_a_withdraw_form_resent_after_the_withdrawal_was_decided_says_so(
    client, player, fund, auditor, decide, status
):
    """Back, then the withdraw form sent again (its hidden key): nothing moves, and the
    page must not announce "Withdrawal requested" for a withdrawal that is no longer
    pending (it did, and the player believed 12.50 was on its way)."""
    from cashier.services import withdrawal_reject

    fund(player, 10_000)
    client.force_login(player)
    data = page_form("withdraw", "12,50")
    client.post("/cashier/withdraw/", data, follow=True)  # (reads its message)
    withdrawal = Withdrawal.objects.get(user=player)
    if decide == "cancel":
        withdrawal_cancel(withdrawal=withdrawal, user=player)
    elif decide == "approve":
        withdrawal_approve(withdrawal=withdrawal, decided_by=auditor)
    else:
        withdrawal_reject(withdrawal=withdrawal, decided_by=auditor)
    balance = wallet_balance(user=player)
    response = client.post("/cashier/withdraw/", data, follow=True)
    said = [str(m) for m in response.context["messages"]]
    assert said == [f"This withdrawal of 12.50 was already requested, and is now {status}."]
    assert wallet_balance(user=player) == balance
    assert Withdrawal.objects.filter(user=player).count() == 1
    assert ledger_audit().ok


@pytest.mark.django_db
def test_a_withdraw_form_resent_while_pending_still_says_requested(client, player, fund):
    fund(player, 10_000)
    client.force_login(player)
    data = page_form("withdraw", "12,50")
    client.post("/cashier/withdraw/", data, follow=True)  # (reads its message)
    response = client.post("/cashier/withdraw/", data, follow=True)
    assert [str(m) for m in response.context["messages"]] == ["Withdrawal requested: 12.50."]
    assert wallet_balance(user=player) == 10_000 - 1_250
