"""Which IP addresses a webhook may connect to: only globally routable unicast.

Kept separate from URL parsing and DNS so the rule is one table that tests can walk
row by row. Embedded IPv4 (IPv4-mapped, NAT64, 6to4, Teredo) is judged by the IPv4 it
carries, because the kernel or a translator will deliver the packet there.
"""
from __future__ import annotations

import ipaddress
from typing import Union

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]

LOOPBACK = "loopback"
PRIVATE = "private"
LINK_LOCAL = "link_local"
CGNAT = "cgnat"
METADATA = "metadata"
MULTICAST = "multicast"
UNSPECIFIED = "unspecified"
RESERVED = "reserved"

# Cloud instance-metadata endpoints: checked before the broader ranges that contain them so
# the refusal names the real danger.
_METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",   # AWS, GCP, Azure, OpenStack, ...
    "169.254.170.2",     # AWS ECS task metadata
    "fd00:ec2::254",     # AWS IPv6 IMDS
    "100.100.100.200",   # Alibaba Cloud
))

# Ordered: first match wins.
_RULES: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/8", UNSPECIFIED),
    ("::/128", UNSPECIFIED),
    ("127.0.0.0/8", LOOPBACK),
    ("::1/128", LOOPBACK),
    ("10.0.0.0/8", PRIVATE),
    ("172.16.0.0/12", PRIVATE),
    ("192.168.0.0/16", PRIVATE),
    ("fc00::/7", PRIVATE),            # unique local
    ("100.64.0.0/10", CGNAT),
    ("169.254.0.0/16", LINK_LOCAL),
    ("fe80::/10", LINK_LOCAL),
    ("224.0.0.0/4", MULTICAST),
    ("ff00::/8", MULTICAST),
    ("240.0.0.0/4", RESERVED),        # includes 255.255.255.255 broadcast
    ("192.0.0.0/24", RESERVED),       # IETF protocol assignments
    ("192.0.2.0/24", RESERVED),       # documentation
    ("198.51.100.0/24", RESERVED),
    ("203.0.113.0/24", RESERVED),
    ("198.18.0.0/15", RESERVED),      # benchmarking
    ("fec0::/10", RESERVED),          # deprecated site-local
    ("2001:db8::/32", RESERVED),      # documentation
    ("::/96", RESERVED),              # deprecated IPv4-compatible
    ("100::/64", RESERVED),           # discard-only
)
_NETWORKS = tuple((ipaddress.ip_network(net), label) for net, label in _RULES)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]   # the client address is the one traffic is relayed to
    return None


def classify(ip: IPAddress) -> str | None:
    """The refusal class of ``ip``, or None when it is a public unicast address."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return LINK_LOCAL
        inner = _embedded_ipv4(ip)
        if inner is not None:
            return classify(inner)
    if ip in _METADATA_ADDRESSES:
        return METADATA
    for network, label in _NETWORKS:
        if ip.version == network.version and ip in network:
            return label
    if not ip.is_global:   # anything IANA lists as not globally reachable that we missed
        return RESERVED
    return None


def refusal(ip: IPAddress, *, allow_loopback: bool) -> str | None:
    """Like :func:`classify`, but loopback passes in the explicit development/test mode."""
    label = classify(ip)
    if label == LOOPBACK and allow_loopback:
        return None
    return label
