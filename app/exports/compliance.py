"""Writes to the append-only compliance access log (who read protected data, when, how much).

Each write is its own short transaction on the tenant's RLS-scoped connection: the log entry
must survive even when the operation it describes (a streamed export) fails or is cut off, and
it must never be rolled back together with it. The API role may only INSERT and SELECT here.
"""
from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any

from app.db.engine import tenant_session
from app.models import ComplianceAccessLog


def log_access(account_id: uuid.UUID, user_id: uuid.UUID | None, action: str, *,
               filters: dict[str, Any], row_count: int | None, remote_addr: str | None) -> uuid.UUID:
    entry_id = uuid.uuid4()
    with tenant_session(account_id) as db:
        db.add(ComplianceAccessLog(
            id=entry_id, account_id=account_id, user_id=user_id, action=action,
            occurred_at=datetime.now(timezone.utc), filters=filters, row_count=row_count,
            remote_addr=remote_addr,
        ))
    return entry_id
