"""Fixtures of the accounts tests."""

import uuid
from collections.abc import Iterator

import pytest
from django.core.cache import cache

from accounts.services import _throttle_keys
from poker_room.addresses import address_group

# The screen names the log-in tests type; their failure counters are deleted afterwards.
LOGIN_NAMES = ("dana", "admin-user")


@pytest.fixture
def address() -> Iterator[str]:
    """A client address of the test's own /64 (from the documentation range: the log-in
    throttle counts an IPv6 client under its /64), so that log-in failure counters in the
    shared Redis cache never carry over between tests."""
    address = f"2001:db8:{uuid.uuid4().hex[:4]}:{uuid.uuid4().hex[:4]}::1"
    yield address
    for username in LOGIN_NAMES:
        keys = _throttle_keys(username=username, address=address_group(address))
        cache.delete_many([key for key, _ in keys])
