"""Issue #12, finding 2: clients' idempotency keys can never be the room's own.

Every ledger movement's key is unique across the ledger, so a client who could choose a
key the room uses later (``hand:5:rake``, ``leave:seat:<id>``, ``withdrawal:<id>:settle``)
could block that movement for good. Client keys now all go through
`client_idempotency_key` (``<channel>:<user id>:<command>:<key>``), and no key the room
makes starts with a client channel. The WebSocket attacks themselves are in
tests/tables/test_client_keys.py.
"""

import ast
import uuid
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from cashier.audit import ledger_audit
from cashier.exceptions import IdempotencyKeyInvalid, IdempotencyKeyMissing
from cashier.idempotency import (
    CLIENT_CHANNELS,
    CLIENT_KEY_MAX,
    client_idempotency_key,
    idempotency_key_is_client,
)
from cashier.models import LedgerTransaction
from cashier.selectors import wallet_balance

ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("accounts", "bench", "cashier", "poker_room", "scripts", "tables")
# The one module allowed to build client keys.
CLIENT_KEY_BUILDER = ROOT / "cashier" / "idempotency.py"
# The room's own keys that must be found, so that the scan below cannot pass on nothing.
KNOWN_INTERNAL_PREFIXES = {"hand:", "leave:seat:", "withdrawal:", "seed-demo:"}


def source_files() -> list[Path]:
    return sorted(
        path
        for directory in SOURCE_DIRS
        for path in (ROOT / directory).rglob("*.py")
        if "migrations" not in path.parts
    )


def literal_head(node: ast.AST) -> str | None:
    """The constant start of a string literal or f-string, or None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        first = node.values[0] if node.values else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
        return ""  # starts with a formatted value: could be anything
    return None


def client_prefixed(text: str) -> bool:
    return any(text.startswith(f"{channel}:") for channel in CLIENT_CHANNELS) and not (
        text.startswith("ws://")  # a URL, not a key
    )


def test_every_key_the_room_makes_is_disjoint_from_client_keys():
    internal: dict[str, str] = {}
    client_built_elsewhere: list[str] = []
    for path in source_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "idempotency_key":
                head = literal_head(node.value)
                if head is not None:
                    internal[f"{where}:{node.value.lineno}"] = head
            head = literal_head(node) if isinstance(node, ast.Constant | ast.JoinedStr) else None
            if head and client_prefixed(head) and path != CLIENT_KEY_BUILDER:
                client_built_elsewhere.append(f"{where}:{node.lineno}: {head!r}")
    # Client keys are built in one place only (the old consumer, API views and cashier
    # page each built their own, and the consumer's let the client's key through bare).
    assert not client_built_elsewhere, client_built_elsewhere
    # Every key the room makes has a constant, non-client prefix.
    bad = {where: head for where, head in internal.items() if not head or client_prefixed(head)}
    assert not bad, bad
    found = set(internal.values())
    assert all(any(h.startswith(p) for h in found) for p in KNOWN_INTERNAL_PREFIXES), found


@pytest.mark.parametrize(
    "attack", ["hand:5:rake", "leave:seat:12", "withdrawal:3:settle", "seed-demo:ana:x", "ws:1:x"]
)
@pytest.mark.parametrize("channel", sorted(CLIENT_CHANNELS))
def test_a_client_key_is_namespaced_by_channel_user_and_command(channel, attack):
    key = client_idempotency_key(channel=channel, user_id=7, command="top_up", key=attack)
    assert key == f"{channel}:7:top_up:{attack}"
    assert idempotency_key_is_client(key)
    assert not idempotency_key_is_client(attack.replace("ws:", "w:"))
    other = client_idempotency_key(channel=channel, user_id=7, command="sit", key=attack)
    assert other != key


@pytest.mark.parametrize(
    ("key", "error"),
    [
        (None, IdempotencyKeyMissing),
        ("", IdempotencyKeyMissing),
        ("x" * (CLIENT_KEY_MAX + 1), IdempotencyKeyInvalid),
        ("x" * 300, IdempotencyKeyInvalid),  # used to crash the ledger with DataError
        ("caf\u00e9", IdempotencyKeyInvalid),
        ("tab\there", IdempotencyKeyInvalid),
        ("new\nline", IdempotencyKeyInvalid),
        (12, IdempotencyKeyInvalid),
    ],
)
def test_bad_client_keys_are_refused_with_a_code(key, error):
    with pytest.raises(error) as refusal:
        client_idempotency_key(channel="ws", user_id=1, command="sit", key=key)
    assert refusal.value.code in ("idempotency_key_missing", "idempotency_key_invalid")
    assert refusal.value.message


def test_the_longest_client_key_fits_the_ledger():
    key = client_idempotency_key(
        channel="web", user_id=2**63 - 1, command="withdraw", key="x" * CLIENT_KEY_MAX
    )
    assert len(key) <= LedgerTransaction._meta.get_field("idempotency_key").max_length


def test_only_known_channels_and_commands_build_keys():
    for bad in ({"channel": "hand"}, {"command": "Top-Up"}, {"user_id": 0}):
        with pytest.raises(ValueError):
            client_idempotency_key(
                **{"channel": "ws", "user_id": 1, "command": "sit"} | bad, key="k"
            )


def api_post(player, url, key, amount):
    client = APIClient()
    client.force_authenticate(player)
    return client.post(url, {"amount": amount}, format="json", HTTP_IDEMPOTENCY_KEY=key)


@pytest.mark.django_db
def test_one_header_key_for_a_deposit_and_a_withdrawal_are_two_requests(player):
    # The API keys used to be `api:<user>:<key>`: a withdrawal sent with the key of an
    # earlier deposit was refused as a reuse. The command is part of the key now.
    deposit = api_post(player, "/api/cashier/deposits/", "my-key", 5_000)
    assert deposit.status_code == 201, deposit.json()
    withdrawal = api_post(player, "/api/cashier/withdrawals/", "my-key", 1_000)
    assert withdrawal.status_code == 201, withdrawal.json()
    assert wallet_balance(user=player) == 4_000
    keys = set(
        LedgerTransaction.objects.filter(user=player).values_list("idempotency_key", flat=True)
    )
    assert keys == {f"api:{player.pk}:deposit:my-key", f"api:{player.pk}:withdrawal:my-key"}
    assert ledger_audit().ok


@pytest.mark.django_db
def test_a_header_key_longer_than_the_ledger_column_is_a_400_not_a_crash(player):
    response = api_post(player, "/api/cashier/deposits/", "k" * 300, 5_000)
    assert response.status_code == 400
    assert response.json()["code"] == "idempotency_key_invalid"
    assert wallet_balance(user=player) == 0


@pytest.mark.django_db
def test_the_cashier_page_namespaces_its_form_key(client, player):
    client.force_login(player)
    form_key = str(uuid.uuid4())
    data = {"deposit-amount": "10", "deposit-idempotency_key": form_key}
    client.post("/cashier/deposit/", data)
    transaction = LedgerTransaction.objects.get(user=player)
    assert transaction.idempotency_key == f"web:{player.pk}:deposit:{form_key}"
    assert ledger_audit().ok
