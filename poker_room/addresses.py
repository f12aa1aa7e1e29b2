"""The client address that a limit per address counts under.

An IPv4 address is one subscriber's (or everyone's behind one NAT). An IPv6 subscriber is
given a whole network, a /64 at the least, and may use any of its 2^64 addresses at
will: a limit per IPv6 address would limit nothing, since each request could come from
an address of its own. So every limit per address in the room (the table sockets'
limits per viewer, the API's throttle of anonymous requests, the log-in throttle) counts
an IPv6 client under its /64 network, as rate limiters commonly do: like everyone behind
one IPv4 NAT, everyone on one /64 (a household, an office's or a campus's network)
shares its limits.

An IPv6 address that carries an IPv4 client's address counts as that IPv4 address: the
IPv4-mapped form a dual-stack socket reports (`::ffff:203.0.113.7`), NAT64's well-known
prefix (`64:ff9b::/96`, RFC 6052: behind a translator every IPv4 client would otherwise
share one /64), 6to4 (`2002::/16`) and Teredo (`2001::/32`). Anything else (a name, a
malformed header's value) counts as itself.

Known limit: a subscriber given more than a /64 (a /56 is common, a /48 for businesses)
holds that many /64s, each with limits of its own.
"""

import ipaddress

# The network an IPv6 subscriber is given at the least (RFC 6177 recommends more).
IPV6_SUBSCRIBER_PREFIX = 64
NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")


def address_group(address: str) -> str:
    """The key of `address` in a limit per address: the address itself for IPv4 (or an
    IPv6 address carrying one), the /64 network for IPv6 (e.g. `2001:db8:1:2::/64`)."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv4Address):
        return str(parsed)
    carried = _ipv4_carried(parsed)
    if carried is not None:
        return str(carried)
    network = ipaddress.IPv6Network((parsed, IPV6_SUBSCRIBER_PREFIX), strict=False)
    return str(network)


def _ipv4_carried(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 client's address an IPv6 address carries, if it is of a form that does."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in NAT64_WELL_KNOWN:
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # (the Teredo server's, the client's)
    return None
