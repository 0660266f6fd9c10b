"""Is a database error "PostgreSQL is away" (retry later) or "these rows are bad" (never)?

Every path that must ride out a database outage — the event writer, held call records, the
number lookup's fallback to its snapshot — asks the same question, so it has one answer.
"""
from __future__ import annotations

from sqlalchemy import exc as sa_exc


def database_unavailable(error: BaseException) -> bool:
    """True when ``error`` says PostgreSQL cannot be reached (retry the same rows later), False
    when it says these rows are bad (retrying them can never succeed)."""
    if isinstance(error, sa_exc.DBAPIError) and error.connection_invalidated:
        return True
    # OperationalError: refused/terminated connections, server shutting down, login refused;
    # InterfaceError: the DBAPI connection is already closed; TimeoutError: pool exhausted.
    return isinstance(error, (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError))
