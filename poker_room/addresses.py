"""The client address that a limit per address counts under.

An IPv4 address is one subscriber's (or everyone's behind one NAT). An IPv6 subscriber is
given a whole network, a /64 at the least, and may use any of its 2^64 addresses at
will: a limit per IPv6 address would limit nothing, since each request could come from
an address of its own. So every limit per address in the room (the table sockets'
limits per viewer, the API's throttle of anonymous requests, the log-in throttle) counts
an IPv6 client under its /64 network, as rate limiters commonly do. An IPv4 address
written as IPv6 (`::ffff:203.0.113.7`, as a dual-stack socket reports it) counts as that
IPv4 address. Anything else (a name, a malformed header's value) counts as itself.
"""

import ipaddress

# The network an IPv6 subscriber is given at the least (RFC 6177 recommends more).
IPV6_SUBSCRIBER_PREFIX = 64


def address_group(address: str) -> str:
    """The key of `address` in a limit per address: the address itself for IPv4, the
    /64 network for IPv6 (e.g. `2001:db8:1:2::/64`)."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv4Address):
        return str(parsed)
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    network = ipaddress.IPv6Network((parsed, IPV6_SUBSCRIBER_PREFIX), strict=False)
    return str(network)
