"""Hosts an account's ``dial`` may reach directly with a ``sip:`` target (docs/api.md
"SIP dial targets"). Empty by default: a ``sip:`` URI bypasses carriers, least-cost routing and
the gateway ACL, so every host is refused until an admin of the account lists it."""
from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, TenantOwned, created_at, uuid_pk


class SipTargetHost(TenantOwned, Base):
    __tablename__ = "sip_target_hosts"

    id: Mapped[uuid.UUID] = uuid_pk()
    # a domain name (lower case, no trailing dot) or an IP address literal (no brackets)
    host: Mapped[str] = mapped_column(String(253), nullable=False)
    created_at: Mapped[datetime] = created_at()

    __table_args__ = (UniqueConstraint("account_id", "host", name="uq_sip_target_hosts_account_host"),)
