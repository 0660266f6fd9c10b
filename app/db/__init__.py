"""Database access. Three roles, three doors:

- ``tenant_session(account_id)``: the API role, row-level security scoped to one account;
- ``platform_session()``: the explicit cross-tenant path (number → account lookup, dispatchers);
- migrations run as the owner (``app.db.migrate``).
"""
from app.db.engine import platform_session, reset_engines, tenant_session

__all__ = ["tenant_session", "platform_session", "reset_engines"]
