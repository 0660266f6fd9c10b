"""A least-cost routing plan for an account, as the originate tests dial through it."""
from __future__ import annotations

import uuid

from app.db.engine import tenant_session
from app.models import Carrier, Gateway, Lcr, LcrCarrierSetEntry, LcrRoute

GERMAN_NUMBER = "4915112345678"


def two_carrier_plan(account_id: uuid.UUID) -> tuple[uuid.UUID, uuid.UUID, uuid.UUID]:
    """Two carriers for ^49 (Cheap first); returns (cheap carrier, its gateway, backup gateway)."""
    with tenant_session(account_id) as session:
        ids = []
        for name, ip in (("Cheap", "192.0.2.10"), ("Backup", "192.0.2.20")):
            carrier = Carrier(account_id=account_id, name=name)
            session.add(carrier)
            session.flush()
            gateway = Gateway(account_id=account_id, carrier_id=carrier.id, ipv4=ip, netmask=32)
            session.add(gateway)
            session.flush()
            ids.append((carrier.id, gateway.id))
        plan = Lcr(account_id=account_id, name="Germany")
        session.add(plan)
        session.flush()
        route = LcrRoute(account_id=account_id, lcr_id=plan.id, regex="^49", priority=1)
        session.add(route)
        session.flush()
        for priority, (carrier_id, _) in enumerate(ids, start=1):
            session.add(LcrCarrierSetEntry(account_id=account_id, lcr_route_id=route.id,
                                           carrier_id=carrier_id, priority=priority, workload=100))
    return ids[0][0], ids[0][1], ids[1][1]
