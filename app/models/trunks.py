"""Carriers (SIP trunks) and their gateways. ``account_id`` NULL = a platform carrier that every
tenant may route through but none may change."""
from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Computed,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    text,
)
from sqlalchemy.dialects.postgresql import CIDR, INET
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.limits import (
    GATEWAY_REGISTER_EXPIRY_MAX_SECONDS,
    GATEWAY_REGISTER_EXPIRY_MIN_SECONDS,
    GATEWAY_REGISTER_RETRY_MAX_SECONDS,
    GATEWAY_REGISTER_RETRY_MIN_SECONDS,
)
from app.models.base import Base, MaybePlatformOwned, created_at, in_list, uuid_pk
from app.models.enums import SRTP_MODES, TRANSPORTS


class Carrier(MaybePlatformOwned, Base):
    __tablename__ = "carriers"

    id: Mapped[uuid.UUID] = uuid_pk()
    name: Mapped[str] = mapped_column(String(255), nullable=False)
    description: Mapped[str | None] = mapped_column(Text)
    is_active: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("true"))
    # digits prepended to the dialled number on this carrier (e.g. "1234#")
    tech_prefix: Mapped[str | None] = mapped_column(String(32))
    e164_leading_plus: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("false"))
    # SRTP (SDES) on this carrier's legs, both directions: off | optional | mandatory
    srtp: Mapped[str] = mapped_column(String(9), nullable=False, server_default=text("'off'"))
    created_at: Mapped[datetime] = created_at()

    gateways: Mapped[list["Gateway"]] = relationship(
        primaryjoin="Carrier.id == foreign(Gateway.carrier_id)",
        order_by="Gateway.created_at",
        viewonly=True,
    )

    __table_args__ = (
        UniqueConstraint("id", "account_id", name="uq_carriers_id_account"),
        CheckConstraint(in_list("srtp", SRTP_MODES), name="srtp_known"),
    )


class Gateway(MaybePlatformOwned, Base):
    """One signalling address of a carrier. Inbound calls are admitted when their source IP is
    inside ``network`` (ipv4/netmask: exact /32 or CIDR). An outbound-only gateway may be a
    DNS ``host`` instead of ``ipv4`` (never inbound: the ACL admits addresses, not names)."""

    __tablename__ = "gateways"

    id: Mapped[uuid.UUID] = uuid_pk()
    carrier_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("carriers.id", ondelete="CASCADE"), nullable=False, index=True
    )
    ipv4: Mapped[str | None] = mapped_column(INET)  # NULL only for a host-name gateway
    # an outbound-only gateway given as a DNS name (carriers hand out FQDNs); FreeSWITCH resolves it
    host: Mapped[str | None] = mapped_column(String(253))
    netmask: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("32"))
    # derived, indexed for "which gateway owns this source IP" (network >>= source_ip)
    network: Mapped[str | None] = mapped_column(
        CIDR, Computed("network(set_masklen(ipv4, netmask))", persisted=True)
    )
    port: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("5060"))
    transport: Mapped[str] = mapped_column(String(3), nullable=False, server_default=text("'udp'"))
    inbound: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("true"))
    outbound: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("true"))
    is_active: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("true"))
    # outbound registration to the carrier (sofia gateway register=true); the password is
    # Fernet-encrypted (app/crypto.py), decrypted only into the switch's generated gateway file
    register: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("false"))
    register_username: Mapped[str | None] = mapped_column(String(255))
    register_password_encrypted: Mapped[str | None] = mapped_column(Text)
    register_realm: Mapped[str | None] = mapped_column(String(255))
    register_expiry: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("600"))
    register_retry: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("30"))
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (
        # a tenant gateway can only hang off a carrier of the same tenant
        ForeignKeyConstraint(
            ["carrier_id", "account_id"],
            ["carriers.id", "carriers.account_id"],
            name="fk_gateways_carrier_same_account",
            ondelete="CASCADE",
        ),
        CheckConstraint("family(ipv4) = 4 AND masklen(ipv4) = 32", name="ipv4_host_address"),
        CheckConstraint("(ipv4 IS NULL) <> (host IS NULL)", name="ipv4_or_host"),
        CheckConstraint("host IS NULL OR (NOT inbound AND netmask = 32)", name="host_outbound_only"),
        CheckConstraint("netmask BETWEEN 0 AND 32", name="netmask_range"),
        CheckConstraint("port BETWEEN 1 AND 65535", name="port_range"),
        CheckConstraint(in_list("transport", TRANSPORTS), name="transport_known"),
        CheckConstraint("NOT register OR (register_username IS NOT NULL AND register_password_encrypted IS NOT NULL)",
                        name="register_has_credentials"),
        CheckConstraint(f"register_expiry BETWEEN {GATEWAY_REGISTER_EXPIRY_MIN_SECONDS} "
                        f"AND {GATEWAY_REGISTER_EXPIRY_MAX_SECONDS}", name="register_expiry_range"),
        CheckConstraint(f"register_retry BETWEEN {GATEWAY_REGISTER_RETRY_MIN_SECONDS} "
                        f"AND {GATEWAY_REGISTER_RETRY_MAX_SECONDS}", name="register_retry_range"),
        Index("ix_gateways_network", "network", postgresql_using="gist", postgresql_ops={"network": "inet_ops"}),
    )
