"""The client address a limit per address counts under (poker_room/addresses.py)."""

import pytest

from poker_room.addresses import address_group


@pytest.mark.parametrize(
    ("address", "group"),
    [
        ("203.0.113.7", "203.0.113.7"),
        # A dual-stack socket's form of an IPv4 client, and the other IPv6 forms that
        # carry one (NAT64, 6to4, Teredo): the IPv4 address, not a /64 shared by many.
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("64:ff9b::192.0.2.33", "192.0.2.33"),
        ("64:ff9b::198.51.100.9", "198.51.100.9"),
        ("2002:c000:204::1", "192.0.2.4"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "192.0.2.45"),
        # Any address of a /64, in any spelling: its network.
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("::1", "::/64"),
        ("fe80::1%eth0", "fe80::/64"),  # a zone id: dropped with the host part
        # Not an address (a header's junk, the forms' "unknown"): as it is.
        ("unknown", "unknown"),
        ("203.0.113.7, 198.51.100.9", "203.0.113.7, 198.51.100.9"),
        ("", ""),
    ],
)
def test_an_address_counts_as_itself_for_ipv4_and_as_its_64_for_ipv6(address, group):
    assert address_group(address) == group


def anonymous_request(address: str, **headers: str):
    from django.contrib.auth.models import AnonymousUser
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    request = Request(APIRequestFactory().get("/api/wallet/", REMOTE_ADDR=address, **headers))
    request.user = AnonymousUser()
    return request


@pytest.mark.parametrize("throttle", ["FailOpenAnonRateThrottle", "FailOpenUserRateThrottle"])
def test_the_apis_throttles_count_an_anonymous_ipv6_client_under_its_64(throttle):
    from poker_room import throttling

    counter = getattr(throttling, throttle)()

    def key(address: str) -> str:
        return counter.get_cache_key(anonymous_request(address), view=None)

    assert key("2001:db8:1:2::1") == key("2001:db8:1:2:aaaa:bbbb:cccc:dddd")
    assert key("2001:db8:1:2::1") != key("2001:db8:1:3::1")
    assert key("::ffff:203.0.113.7") == key("203.0.113.7") != key("203.0.113.8")


def test_the_apis_throttles_ignore_an_x_forwarded_for_the_client_wrote():
    # Any client may send the header: taken as the key, each request could pick its own.
    from poker_room.throttling import FailOpenAnonRateThrottle

    counter = FailOpenAnonRateThrottle()
    plain = counter.get_cache_key(anonymous_request("203.0.113.7"), view=None)
    for forged in ("198.51.100.1", "198.51.100.2, 203.0.113.7", "2001:db8::1"):
        request = anonymous_request("203.0.113.7", HTTP_X_FORWARDED_FOR=forged)
        assert counter.get_cache_key(request, view=None) == plain
