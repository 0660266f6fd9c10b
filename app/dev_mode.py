"""Development mode: the built-in development JWT secret (``app.settings.DEV_JWT_SECRET``) is in
use. Its tokens can be forged by anyone who has the source, so the API serves it on loopback
only (``app.api.bind_guard``), and the other listeners of a development run follow the same
rule: a wildcard bind (the defaults ``0.0.0.0`` of ``controller.listen`` and the workers'
ops port) becomes loopback, so a laptop running ``scripts/run`` exposes nothing. An address the
operator configured explicitly is kept."""
from __future__ import annotations

from app.settings import DEV_JWT_SECRET, get_settings

LOOPBACK_HOST = "127.0.0.1"
ALL_INTERFACES = "0.0.0.0"
_WILDCARDS = frozenset({"", "0.0.0.0", "::", "[::]"})


def dev_secret_in_use() -> bool:
    """The one test of development mode (the API's bind guard uses it too)."""
    return get_settings().jwt_secret == DEV_JWT_SECRET


def listen_host(host: str) -> str:
    """``host`` for a listener: loopback instead of every interface in development mode."""
    if host in _WILDCARDS and dev_secret_in_use():
        return LOOPBACK_HOST
    return host
