"""Provisioning through the real API process, as an operator does after ``sbc tenant create``.

Only the tenant itself is created in Python (``create_tenant``, the code behind the CLI): the
API has no tenant-creation endpoint. Carriers, gateways, applications and numbers go through
HTTP, so the routing change events reach the controller exactly as in production.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Callable

from sqlalchemy import text
from sqlalchemy.engine import Engine

from tests.plugins.eventually import NotYet, eventually
from tests.realswitch.freeswitch import RealSwitch
from tests.realswitch.product import ApiSession, Product

ADMIN_PASSWORD = "realswitch-admin-password"
ALL_LICENSES = ["api-access", "queue-mgmt", "programmable-voice"]
ACL_WAIT_SECONDS = 30.0
RECORD_WAIT_SECONDS = 30.0


def poll(check: Callable[[], Any], timeout: float, interval: float = 0.1) -> Any:
    """``check()``'s first truthy value within ``timeout`` seconds, else its last value (the
    callers assert on it with their own message): the shared ``eventually`` underneath."""
    try:
        return eventually(check, timeout=timeout, interval=interval)
    except NotYet:
        return check()


def unique_number(prefix: str = "1555") -> str:
    return prefix + str(uuid.uuid4().int)[:8]


@dataclass
class Tenant:
    """An account with an inbound trunk from 127.0.0.1 (where sipp callers send from)."""

    account_id: uuid.UUID
    subdomain: str
    admin: ApiSession
    carrier_id: str
    gateway_id: str
    switch: RealSwitch
    owner_engine: Engine

    def application(self, verbs: list[dict], **fields: Any) -> str:
        body = {"name": f"app-{uuid.uuid4().hex[:6]}", "app_json": verbs, **fields}
        return self.admin.post("/api/applications", body)["id"]

    def number_for(self, verbs: list[dict], **fields: Any) -> str:
        """A new number answered by a new application running ``verbs``."""
        number = unique_number()
        self.admin.post("/api/phone-numbers", {"number": number,
                                               "application_id": self.application(verbs, **fields)})
        return number

    def records(self, to_number: str) -> list[dict]:
        with self.owner_engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT * FROM call_records WHERE to_number = :n ORDER BY started_at"),
                {"n": to_number}).mappings().all()
        return [dict(r) for r in rows]

    def wait_record(self, to_number: str, count: int = 1,
                    timeout: float = RECORD_WAIT_SECONDS) -> list[dict]:
        rows = poll(lambda: (r := self.records(to_number)) and len(r) >= count and r, timeout)
        assert rows, f"no call record for {to_number} within {timeout}s"
        return rows

    def events(self, routing_key_prefix: str, since: float = 0.0) -> list[dict]:
        with self.owner_engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT routing_key, body FROM event_outbox WHERE routing_key LIKE :k "
                "AND body->>'account' = :a ORDER BY created_at"),
                {"k": routing_key_prefix + "%", "a": str(self.account_id)}).all()
        return [{"key": r[0], **r[1]} for r in rows]


def gateway_admitted(switch: RealSwitch, ip: str = "127.0.0.1") -> bool:
    return switch.api(f"acl {ip} gateways", check=False).strip() == "true"


def create_tenant_with_trunk(product: Product, owner_engine: Engine, *,
                             max_concurrent_calls: int = 0) -> Tenant:
    from app.accounts.service import create_tenant

    subdomain = f"rs-{uuid.uuid4().hex[:10]}"
    account = create_tenant(subdomain, "admin", ADMIN_PASSWORD, ALL_LICENSES,
                            max_concurrent_calls=max_concurrent_calls, bcrypt_rounds=4)
    admin = product.client(subdomain, "admin", ADMIN_PASSWORD)
    with product.routing_changes(2, timeout=ACL_WAIT_SECONDS):
        carrier = admin.post("/api/carriers", {"name": "sipp trunk"})
        gateway = admin.post(f"/api/carriers/{carrier['id']}/gateways",
                             {"ipv4": "127.0.0.1", "netmask": 32, "inbound": True,
                              "outbound": False})
    assert gateway_admitted(product.switch), \
        "the gateway never reached the switch's ACL (routing.config.changed → reloadacl)"
    return Tenant(account.id, subdomain, admin, carrier["id"], gateway["id"], product.switch,
                  owner_engine)
