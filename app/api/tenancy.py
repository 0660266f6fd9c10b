"""The tenant of a request is the left-most label of the Host under ``SBC_BASE_DOMAIN``.

``acme.localhost:8080`` with base domain ``localhost`` is tenant ``acme``. Exactly one label is
accepted (``a.b.localhost`` is not a tenant) so a tenant can never be spoofed by nesting names,
and the bare base domain has no tenant. The host is only a *claim*: tokens carry the tenant they
were issued for and are refused on any other host (see ``app.api.security``).
"""
from __future__ import annotations

import re

from flask import request

from app.errors import BadRequest
from app.settings import get_settings

# One DNS label, lower-case (hosts are case-insensitive; we normalise before matching).
_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\Z")


def tenant_from_host(host: str, base_domain: str) -> str | None:
    """Subdomain label of ``host`` under ``base_domain``; None when the host names no tenant."""
    name = (host or "").strip().lower()
    if name.startswith("["):  # IPv6 literal: never a tenant
        return None
    name = name.rsplit(":", 1)[0] if ":" in name else name
    name = name.rstrip(".")
    base = base_domain.strip().lower().rstrip(".")
    suffix = "." + base
    if not base or not name.endswith(suffix):
        return None
    label = name[: -len(suffix)]
    return label if _LABEL.match(label) else None


def request_tenant() -> str:
    """Tenant subdomain of the current request, or 400 ``tenant_required``."""
    subdomain = tenant_from_host(request.host, get_settings().base_domain)
    if subdomain is None:
        raise BadRequest(
            "Use the tenant's host name (<tenant>." + get_settings().base_domain + ").",
            code="tenant_required",
        )
    return subdomain
