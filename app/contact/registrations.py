"""Agent registrations from the switch: ``sofia::register`` / ``sofia::unregister`` /
``sofia::expire`` on the ``internal`` profile keep ``cc:reg:<domain>:<user>`` in Redis (TTL =
the registration's expiry), so the distributor offers calls only to registered agents.

Every controller receives these events from every switch it is linked to; the writes are
idempotent (SET with expiry, DEL), so several controllers do not disagree.
"""
from __future__ import annotations

import logging
from typing import Any

from app.contact.presence import Presence

log = logging.getLogger(__name__)

AGENT_PROFILE = "internal"
REGISTER = "sofia::register"
UNREGISTER = "sofia::unregister"
EXPIRE = "sofia::expire"
REGISTRATION_EVENTS: tuple[str, ...] = (REGISTER, UNREGISTER, EXPIRE)
# sofia gives no expiry on some registers (e.g. a refresh it answers itself): assume this
DEFAULT_EXPIRES_SECONDS = 3600


def _header(event: Any, *names: str) -> str:
    for name in names:
        value = event.get(name)
        if value:
            return value.decode() if isinstance(value, bytes) else str(value)
    return ""


class RegistrationTracker:
    def __init__(self, presence: Presence) -> None:
        self.presence = presence

    def on_event(self, event: Any, agent_sip_address: str = "") -> None:
        """``agent_sip_address``: where the other nodes reach the agent profile of the switch
        this event came from (cross-node offers); recorded against its Core-UUID."""
        if _header(event, "profile-name") != AGENT_PROFILE:
            return
        subclass = _header(event, "Event-Subclass")
        user = _header(event, "from-user", "username", "user")
        domain = _header(event, "from-host", "realm", "host")
        if not user or not domain:
            log.warning("agent registration event %s without user/domain", subclass)
            return
        if subclass == REGISTER:
            expires = _header(event, "expires")
            seconds = int(expires) if expires.isdigit() and int(expires) > 0 else DEFAULT_EXPIRES_SECONDS
            node = _header(event, "Core-UUID")
            if agent_sip_address:
                self.presence.node_seen(node, agent_sip_address)
            self.presence.registered(domain, user, seconds, node=node)
            log.info("agent %s@%s registered for %d s (%s)", user, domain, seconds, _header(event, "contact"))
        elif subclass in (UNREGISTER, EXPIRE):
            self.presence.unregistered(domain, user)
            log.info("agent %s@%s %s", user, domain, "unregistered" if subclass == UNREGISTER else "expired")

    def attach(self, connection: Any, agent_sip_address: str = "") -> None:
        def handler(event: Any) -> None:
            self.on_event(event, agent_sip_address)

        for name in REGISTRATION_EVENTS:
            connection.on(name, handler)
