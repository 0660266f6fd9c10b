"""Plain rows the routing compiler consumes.

The compiler works on these instead of ORM objects so it is pure (testable without a database,
cheap to benchmark) and so the loader is the only place that knows the table layout.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CarrierRow:
    id: uuid.UUID
    name: str
    account_id: uuid.UUID | None = None  # None: platform carrier shared with every tenant
    tech_prefix: str = ""                 # prepended to the dialled number on this carrier
    is_active: bool = True
    e164_leading_plus: bool = False       # the carrier wants "+" before the E.164 number
    srtp: str = "off"                     # SRTP on its legs: off | optional | mandatory


@dataclass(frozen=True)
class GatewayRow:
    id: uuid.UUID
    carrier_id: uuid.UUID
    ipv4: str
    netmask: int = 32        # /32 exact host or a CIDR block (inbound matching only)
    port: int = 5060
    transport: str = "udp"   # "udp" | "tcp"
    inbound: bool = True     # source of inbound trunk calls: goes into the ACL
    outbound: bool = False   # target of outbound calls: becomes a sofia gateway
    is_active: bool = True
    host: str | None = None  # DNS name of an outbound-only gateway (then ipv4 is "")
    register: bool = False   # the switch registers to the carrier (sofia gateway register)
    register_username: str | None = None
    # decrypted only for the generated gateway file; never in a repr or a log line
    register_password: str | None = field(default=None, repr=False)
    register_realm: str | None = None
    register_expiry: int = 600
    register_retry: int = 30

    @property
    def address(self) -> str:
        """Where sofia sends the INVITE: the host name, else the IPv4 address."""
        return self.host or self.ipv4


@dataclass(frozen=True)
class PlanRow:
    id: uuid.UUID
    name: str
    account_id: uuid.UUID | None = None  # None: platform-level plan
    priority: int = 0                     # order among plans of the same level
    is_active: bool = True
    service_provider_id: uuid.UUID | None = None  # platform plan limited to one provider


@dataclass(frozen=True)
class RouteRow:
    id: uuid.UUID
    lcr_id: uuid.UUID
    regex: str
    priority: int = 0


@dataclass(frozen=True)
class CarrierEntryRow:
    id: uuid.UUID
    lcr_route_id: uuid.UUID
    carrier_id: uuid.UUID
    priority: int = 0
    workload: int = 1


@dataclass(frozen=True)
class AccountRow:
    id: uuid.UUID
    service_provider_id: uuid.UUID | None = None


@dataclass(frozen=True)
class RoutingRows:
    """Everything routing needs, read in one transaction so the snapshot is consistent."""
    carriers: tuple[CarrierRow, ...] = ()
    gateways: tuple[GatewayRow, ...] = ()
    plans: tuple[PlanRow, ...] = ()
    routes: tuple[RouteRow, ...] = ()
    entries: tuple[CarrierEntryRow, ...] = ()
    accounts: tuple[AccountRow, ...] = ()
