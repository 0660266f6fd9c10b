"""Builds RoutingRows from a JSON fixture with readable keys (ids are uuid5 of the keys)."""
from __future__ import annotations

import json
import uuid
from pathlib import Path

from app.routing.rows import (
    AccountRow,
    CarrierEntryRow,
    CarrierRow,
    GatewayRow,
    PlanRow,
    RouteRow,
    RoutingRows,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "routing"
_NS = uuid.UUID("6f1c1f3e-7f1a-4b52-9d5e-0c5b2b1e7a10")


def key_id(key: str | None) -> uuid.UUID | None:
    return None if key is None else uuid.uuid5(_NS, key)


def load_world(name: str = "lcr_world.json") -> dict:
    return json.loads((FIXTURES / name).read_text())


def build_rows(world: dict) -> RoutingRows:
    return RoutingRows(
        carriers=tuple(
            CarrierRow(key_id(c["key"]), c["name"], key_id(c.get("account")), c.get("tech_prefix", ""),
                       c.get("is_active", True))
            for c in world.get("carriers", [])),
        gateways=tuple(
            GatewayRow(key_id(g["key"]), key_id(g["carrier"]), g["ipv4"], g.get("netmask", 32),
                       g.get("port", 5060), g.get("transport", "udp"), g.get("inbound", True),
                       g.get("outbound", False), g.get("is_active", True))
            for g in world.get("gateways", [])),
        plans=tuple(
            PlanRow(key_id(p["key"]), p["name"], key_id(p.get("account")), p.get("priority", 0),
                    p.get("is_active", True), key_id(p.get("provider")))
            for p in world.get("plans", [])),
        routes=tuple(
            RouteRow(key_id(r["key"]), key_id(r["plan"]), r["regex"], r.get("priority", 0))
            for r in world.get("routes", [])),
        entries=tuple(
            CarrierEntryRow(key_id(f"{e['route']}/{e['carrier']}"), key_id(e["route"]),
                            key_id(e["carrier"]), e.get("priority", 0), e.get("workload", 100))
            for e in world.get("entries", [])),
        accounts=tuple(
            AccountRow(key_id(a["key"]), key_id(a.get("provider")))
            for a in world.get("accounts", [])),
    )


def names_by_id(world: dict) -> dict[uuid.UUID, str]:
    out: dict[uuid.UUID, str] = {}
    for table in ("carriers", "gateways", "plans", "routes", "accounts"):
        for row in world.get(table, []):
            out[key_id(row["key"])] = row["key"]
    return out
