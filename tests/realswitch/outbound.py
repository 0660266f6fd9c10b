"""Carriers, routes and records for the real-switch tests that dial out (least-cost routing,
originate, call state): sipp carriers on loopback ports provisioned through the API, and reads
of the rows the product wrote. The fixtures ``routing_tenant`` and ``carriers`` (conftest.py)
are built on these."""
from __future__ import annotations

import json
import uuid
from pathlib import Path

from sqlalchemy import text

from app.routing.lcr import gateway_name
from tests.realswitch.freeswitch import free_port
from tests.realswitch.provision import Tenant, poll
from tests.realswitch.rtp_pcap import talk_pcap, wav_pcap
from tests.realswitch.sipp import SCENARIOS, Sipp, SippProcess

CODECS = {"PCMU": 0, "PCMA": 8, "G729": 18}
GATEWAY_STATE_WAIT_SECONDS = 90.0  # sofia pings every GATEWAY_PING_SECONDS (30) + SIP timers
CALL_WAIT_SECONDS = 30.0


class CarrierFarm:
    """sipp carriers on loopback ports, stopped at teardown."""

    def __init__(self, sipp: Sipp, folder: Path) -> None:
        self.sipp = sipp
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.running: list[SippProcess] = []

    def refusing(self, port: int | None = None) -> SippProcess:
        """Up (answers OPTIONS) but refuses every INVITE with 503."""
        return self._start("carrier-refuse-503.xml", port)

    def answering(self, codec: str = "PCMU", port: int | None = None) -> SippProcess:
        """Answers calls offering ``codec``; 488 for an offer without it."""
        template = (SCENARIOS / "carrier-strict-codec.xml.tmpl").read_text()
        path = self.folder / f"carrier-{codec}.xml"
        path.write_text(template.replace("{pt}", str(CODECS[codec])).replace("{name}", codec))
        return self._start(str(path), port)

    def talking(self, port: int | None = None) -> SippProcess:
        """Answers with PCMU and streams 7 s of speech once (a callee the caller can be heard
        to reach), then waits for the BYE."""
        pcap = talk_pcap(self.folder, ptime_ms=20, codec="PCMU")
        path = self.folder / "carrier-talk.xml"
        path.write_text((SCENARIOS / "carrier-talk.xml.tmpl").read_text().replace("{pcap}", str(pcap)))
        return self._start(str(path), port)

    def playing(self, wav: Path, port: int | None = None) -> SippProcess:
        """Answers with PCMU and plays ``wav`` (8 kHz mono 16-bit) once from the answer, then
        waits for the BYE: a customer whose phone is a person or an answering machine
        (``../shared/freeswitch/amd``'s human_hello_silence.wav, machine_greeting_beep.wav)."""
        pcap = wav_pcap(self.folder, wav)
        path = self.folder / f"carrier-{wav.stem}.xml"
        path.write_text((SCENARIOS / "carrier-talk.xml.tmpl").read_text().replace("{pcap}", str(pcap)))
        return self._start(str(path), port)

    def _start(self, scenario: str, port: int | None) -> SippProcess:
        proc = self.sipp.carrier(scenario=scenario, port=port or free_port())
        self.running.append(proc)
        return proc

    def stop(self, proc: SippProcess) -> None:
        proc.stop()
        if proc in self.running:
            self.running.remove(proc)

    def stop_all(self) -> None:
        for proc in list(self.running):
            self.stop(proc)


def carrier(tenant: Tenant, name: str, port: int) -> tuple[str, str]:
    """(carrier id, gateway id): an outbound-only gateway 127.0.0.1:<port>, applied by the
    controller before this returns."""
    with tenant.admin.product.routing_changes(2):
        carrier = tenant.admin.post("/api/carriers", {"name": name})
        gateway = tenant.admin.post(f"/api/carriers/{carrier['id']}/gateways",
                                    {"ipv4": "127.0.0.1", "netmask": 32, "port": port,
                                     "inbound": False, "outbound": True})
    return carrier["id"], gateway["id"]


def route(product, tenant: Tenant, prefix: str, carrier_ids: list[str]) -> None:
    """A plan whose one route sends ``^prefix`` to the carriers in this order; waits until
    the controller put their gateways into sofia."""
    with product.routing_changes(2 + len(carrier_ids)):
        plan = tenant.admin.post("/api/lcr", {"name": f"plan-{prefix}"})
        route = tenant.admin.post(f"/api/lcr/{plan['id']}/routes", {"regex": f"^{prefix}"})
        for priority, carrier_id in enumerate(carrier_ids, start=1):
            tenant.admin.post(f"/api/lcr/routes/{route['id']}/carriers",
                              {"carrier_id": carrier_id, "priority": priority})


def gateway_status(switch, gateway_id: str) -> str:
    return switch.api(f"sofia status gateway {gateway_name(uuid.UUID(gateway_id))}", check=False)


def wait_gateways(switch, *gateway_ids: str) -> None:
    for gid in gateway_ids:
        assert poll(lambda: "Invalid Gateway" not in gateway_status(switch, gid), 20), \
            f"gateway {gid} never reached sofia:\n{gateway_status(switch, gid)}"


def prefix() -> str:
    return "49" + str(uuid.uuid4().int)[:4]


def channel_codecs(switch) -> dict[str, str]:
    """Read codec per channel once every channel is answered (while the callee still rings,
    its leg's codec is not negotiated yet)."""
    rows = json.loads(switch.api("show channels as json") or "{}").get("rows") or []
    if any(row.get("callstate") != "ACTIVE" for row in rows):
        return {}
    return {row["name"]: row["read_codec"] for row in rows}


def wait_codecs(switch, count: int = 2) -> dict[str, str]:
    return poll(lambda: (c := channel_codecs(switch)) and len(c) >= count and c, 15) or {}


def outbox(owner_engine, routing_key_like: str, payload_field: str, value: str) -> list[dict]:
    with owner_engine.connect() as conn:
        rows = conn.execute(text(
            "SELECT routing_key, body FROM event_outbox WHERE routing_key LIKE :k "
            "AND body->'payload'->>:f = :v ORDER BY created_at"),
            {"k": routing_key_like, "f": payload_field, "v": value}).all()
    return [{"key": r[0], **r[1]} for r in rows]


def bridged(switch, call_id: str) -> bool:
    """``call_id`` is one leg of a bridged call on the switch. ``show calls`` also lists a lone
    answered leg (``b_uuid`` empty): a customer waiting for an agent, or while answering-machine
    detection runs, is not bridged."""
    rows = json.loads(switch.api("show calls as json", check=False) or "{}").get("rows") or []
    return any((row.get("uuid") == call_id and row.get("b_uuid")) or row.get("b_uuid") == call_id for row in rows)


def record(owner_engine, call_id: str) -> dict | None:
    with owner_engine.connect() as conn:
        row = conn.execute(text("SELECT * FROM call_records WHERE call_id = :c"),
                           {"c": call_id}).mappings().first()
    return dict(row) if row else None


def originate_app(tenant: Tenant) -> tuple[str, str]:
    """(caller id number the account owns, application saying one sentence then hanging up)."""
    caller_id = tenant.number_for([{"verb": "hangup"}])
    app = tenant.application([{"verb": "say", "text": "This is a call from the platform."},
                              {"verb": "hangup"}])
    return caller_id, app
