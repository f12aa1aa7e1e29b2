"""Idempotency keys: the clients' and the room's own, kept apart.

Every ledger movement has a key, unique across the whole ledger (`cashier/services.py`),
and a key that is already taken makes a later movement a replay or an
`IdempotencyKeyReused` refusal. Keys therefore come from two disjoint families:

- The room's own keys, built by the services for movements no client asks for by key:
  ``hand:<id>:rake``, ``withdrawal:<id>:settle``, ``leave:seat:<id>``,
  ``seed-demo:<name>:starting-deposit``. None starts with a client channel's prefix.
- Client keys (the REST ``Idempotency-Key`` header, the WebSocket ``key`` field, the
  cashier page's hidden form key) all go through `client_idempotency_key`, which checks
  them and namespaces them ``<channel>:<user id>:<command>:<key>``. Without this, a
  client could send ``hand:5:rake`` as its key and pre-claim hand 5's rake, so that the
  hand never settles (issue #12, finding 2).

So a client's key can collide only with another key of the same user, channel and
command: that is a retry, which is the point of a key.
"""

import re

from cashier.exceptions import IdempotencyKeyInvalid, IdempotencyKeyMissing

# The channels clients reach the ledger through; the room's own keys never start with
# any of these followed by a colon (tests/cashier/test_idempotency_keys.py checks).
CLIENT_CHANNELS = frozenset({"api", "ws", "web"})
# Longest key a client may send. With the prefix the stored key stays far below the
# ledger's 200 characters (a longer one used to crash with DataError).
CLIENT_KEY_MAX = 100
_COMMAND_RE = re.compile(r"[a-z][a-z_]{0,29}\Z")


def client_idempotency_key(*, channel: str, user_id: int, command: str, key: object) -> str:
    """The ledger key for a client's `key`: ``<channel>:<user id>:<command>:<key>``.

    Raises `IdempotencyKeyMissing` for an absent or empty key and
    `IdempotencyKeyInvalid` for one that is not printable ASCII of at most
    `CLIENT_KEY_MAX` characters. A bad channel, user id or command is a programming
    error (ValueError).
    """
    if channel not in CLIENT_CHANNELS:
        raise ValueError(f"Unknown client channel {channel!r}.")
    if type(user_id) is not int or user_id < 1:
        raise ValueError(f"Bad user id {user_id!r}.")
    if not isinstance(command, str) or _COMMAND_RE.match(command) is None:
        raise ValueError(f"Bad command name {command!r}.")
    if key is None or key == "":
        raise IdempotencyKeyMissing(
            "An idempotency key is required: send a new random key (a UUID, say) with "
            "each request, and the same key when you retry it."
        )
    if not isinstance(key, str):
        raise IdempotencyKeyInvalid("The idempotency key must be a string.")
    if len(key) > CLIENT_KEY_MAX or not key.isascii() or not key.isprintable():
        raise IdempotencyKeyInvalid(
            f"The idempotency key must be printable ASCII, at most {CLIENT_KEY_MAX} characters."
        )
    return f"{channel}:{user_id}:{command}:{key}"


def idempotency_key_is_client(key: str) -> bool:
    """True for a key made by `client_idempotency_key` (for audits and tests)."""
    channel, sep, _ = key.partition(":")
    return bool(sep) and channel in CLIENT_CHANNELS
