"""The built-in development JWT secret (``app.settings.DEV_JWT_SECRET``) is in the source: with
it anyone can sign an admin token for any tenant. It is accepted only while the API can be
reached from this machine alone, i.e. it listens on loopback addresses only.

The earlier guard trusted ``SBC_BASE_DOMAIN=localhost``, but the tenant comes from the Host
header, which the client chooses: an API on 0.0.0.0 with the dev secret and the default domain
answered anyone who sent ``Host: acme.localhost``. What the process binds to is the one fact a
client cannot choose, so that is what is checked."""
from __future__ import annotations

import contextlib
import ipaddress
import socket

from app.dev_mode import LOOPBACK_HOST, dev_secret_in_use

__all__ = ["LOOPBACK_HOST", "DevSecretExposed", "dev_secret_in_use", "is_loopback_only",
           "refuse_exposed_dev_secret"]
DEV_SECRET_REFUSED = ("refusing to start: the built-in development JWT secret is public; set "
                      "SBC_JWT_SECRET, or listen on loopback only (--host 127.0.0.1)")


class DevSecretExposed(RuntimeError):
    """The dev secret with a listener other processes or hosts could reach."""


def is_loopback_only(host: str) -> bool:
    """True when every address ``host`` binds to is a loopback address ("" and 0.0.0.0/:: are
    every interface; a name counts only if all it resolves to is loopback)."""
    if not host:
        return False
    with contextlib.suppress(ValueError):  # not an IP literal: a name, resolved below
        return ipaddress.ip_address(host).is_loopback
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    addresses = {info[4][0].split("%", 1)[0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def refuse_exposed_dev_secret(host: str | None) -> None:
    """Raise ``DevSecretExposed`` (one clear line) when the dev secret would be served on
    ``host``; ``None`` means "bind not known here" (e.g. an external WSGI server): refused."""
    if dev_secret_in_use() and (host is None or not is_loopback_only(host)):
        raise DevSecretExposed(DEV_SECRET_REFUSED)
