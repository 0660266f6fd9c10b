"""routing.config.changed: the compiled snapshot is rebuilt, the generated FreeSWITCH files are
rewritten and the switch is told (reloadacl, killgw, rescan) over inbound ESL (simulator)."""
from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session

from app.events.envelope import Envelope
from app.events.outbox import publish
from app.events.publisher import OutboxPublisher
from app.models import Carrier, Gateway
from app.routing.cache import RoutingCache, RoutingReloader, start_routing_listener
from app.routing.fsconfig import ACL_FILE, GATEWAYS_FILE
from app.routing.lcr import gateway_name
from esl.inbound import InboundConnection
from tests.plugins.eventually import eventually


def _add_carrier(owner_engine, ip: str, netmask: int = 32) -> tuple[uuid.UUID, uuid.UUID]:
    carrier_id, gateway_id = uuid.uuid4(), uuid.uuid4()
    with Session(owner_engine) as db, db.begin():
        db.add(Carrier(id=carrier_id, account_id=None, name=f"reload-{carrier_id.hex[:6]}"))
        db.flush()
        db.add(Gateway(id=gateway_id, account_id=None, carrier_id=carrier_id, ipv4=ip, netmask=netmask,
                       port=5060, transport="udp", inbound=True, outbound=True))
    return carrier_id, gateway_id


def _remove(owner_engine, carrier_id: uuid.UUID) -> None:
    with Session(owner_engine) as db, db.begin():
        db.execute(update(Gateway).where(Gateway.carrier_id == carrier_id).values(is_active=False))


@pytest.fixture()
def esl(inbound_sim):
    conn = InboundConnection(*inbound_sim.address, "ClueCon", reconnect=False)
    conn.connect()
    yield conn
    conn.close()


def test_given_new_gateway_when_routing_changed_then_snapshot_files_and_switch_are_updated(
        owner_engine, tmp_path, inbound_sim, esl):
    ip = f"198.18.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250 + 1}"
    cache = RoutingCache()
    reloader = RoutingReloader(cache, tmp_path, lambda: [esl], sleep=lambda _s: None)
    reloader.sync()
    assert cache.identify_carrier(ip) is None
    carrier_id, gateway_id = _add_carrier(owner_engine, ip)
    assert cache.identify_carrier(ip) is None  # cached snapshot: the database is not read per call
    before = len(inbound_sim.commands)

    acl_changed, diff = reloader.handle_event(Envelope(type="routing.config.changed", payload={}))

    assert cache.identify_carrier(ip) == (carrier_id, gateway_id)
    assert acl_changed and gateway_name(gateway_id) in diff.added
    acl = ET.parse(tmp_path / ACL_FILE).getroot()
    assert f"{ip}/32" in [n.get("cidr") for n in acl.findall("node")]
    gws = ET.parse(tmp_path / GATEWAYS_FILE).getroot()
    assert gateway_name(gateway_id) in [g.get("name") for g in gws.findall("gateway")]
    sent = [c[4:] for c in inbound_sim.commands[before:] if c.startswith("api ")]
    assert sent == ["reloadacl", "sofia profile external rescan"]


def test_given_gateway_deactivated_when_routing_changed_then_killgw_before_rescan(
        owner_engine, tmp_path, inbound_sim, esl):
    ip = f"198.19.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250 + 1}"
    carrier_id, gateway_id = _add_carrier(owner_engine, ip)
    reloader = RoutingReloader(RoutingCache(), tmp_path, lambda: [esl], sleep=lambda _s: None)
    reloader.sync()
    _remove(owner_engine, carrier_id)
    before = len(inbound_sim.commands)

    _, diff = reloader.handle_event(Envelope(type="routing.config.changed", payload={}))

    assert diff.removed == (gateway_name(gateway_id),)
    sent = [c[4:] for c in inbound_sim.commands[before:] if c.startswith("api ")]
    assert sent == ["reloadacl", f"sofia profile external killgw {gateway_name(gateway_id)}",
                    "sofia profile external rescan"]
    assert reloader.cache.identify_carrier(ip) is None


def test_given_nothing_changed_when_routing_changed_then_switch_is_not_touched(tmp_path, inbound_sim, esl):
    reloader = RoutingReloader(RoutingCache(), tmp_path, lambda: [esl], sleep=lambda _s: None)
    reloader.sync()
    before = len(inbound_sim.commands)
    reloader.handle_event(Envelope(type="routing.config.changed", payload={}))
    assert [c for c in inbound_sim.commands[before:] if c.startswith("api ")] == []


def test_given_freeswitch_reconnects_then_acl_and_gateways_are_forced(tmp_path, inbound_sim, esl):
    reloader = RoutingReloader(RoutingCache(), tmp_path, lambda: [esl], sleep=lambda _s: None)
    reloader.sync()
    before = len(inbound_sim.commands)
    reloader.on_freeswitch_connected(esl)
    sent = [c[4:] for c in inbound_sim.commands[before:] if c.startswith("api ")]
    assert sent == ["reloadacl", "sofia profile external rescan"]


def test_given_other_event_type_when_handled_then_ignored(tmp_path):
    reloader = RoutingReloader(RoutingCache(loader=lambda: (_ for _ in ()).throw(AssertionError("loaded"))),
                               tmp_path, lambda: [])
    changed, diff = reloader.handle_event(Envelope(type="system.config.changed", payload={}))
    assert not changed and not diff.any


@pytest.mark.usefixtures("amqp_vhost")
def test_given_listener_when_routing_changed_is_published_then_controller_snapshot_reloads(owner_engine, tmp_path):
    ip = f"198.18.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250 + 1}"
    cache = RoutingCache()
    reloader = RoutingReloader(cache, tmp_path, lambda: [], sleep=lambda _s: None)
    cache.table()
    publisher = OutboxPublisher(poll_seconds=0.2).start()
    listener = start_routing_listener(reloader)
    try:
        assert listener.ready.wait(10)
        carrier_id, gateway_id = _add_carrier(owner_engine, ip)
        publish("system.events", "routing.config.changed", {"reason": "test"})
        eventually(lambda: cache.identify_carrier(ip) == (carrier_id, gateway_id), timeout=10,
                   what="controller snapshot knows the new carrier")
    finally:
        listener.stop()
        publisher.stop()


@pytest.mark.usefixtures("amqp_vhost")
def test_given_broker_connection_lost_when_it_comes_back_then_controller_resyncs_missed_changes(owner_engine, tmp_path):
    from tests.plugins.services import amqp_vhost_name, close_vhost_connections

    ip = f"198.18.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250 + 1}"
    cache = RoutingCache()
    reloader = RoutingReloader(cache, tmp_path, lambda: [], sleep=lambda _s: None)
    cache.table()
    listener = start_routing_listener(reloader, backoff_seconds=(0.05, 0.2))
    try:
        assert listener.ready.wait(10)
        first, caught_up = listener.consumer.connects, listener.catch_ups
        carrier_id, gateway_id = _add_carrier(owner_engine, ip)  # changed, but nobody announced it
        assert close_vhost_connections(amqp_vhost_name()) >= 1
        eventually(lambda: cache.identify_carrier(ip) is not None, timeout=15,
                   what="the unannounced carrier after the reconnect's catch-up")
        assert listener.consumer.connects > first and listener.catch_ups > caught_up
        assert cache.identify_carrier(ip) == (carrier_id, gateway_id)
    finally:
        listener.stop()


@pytest.mark.usefixtures("amqp_vhost")
def test_given_a_change_nobody_announced_when_the_listener_binds_then_it_is_applied_before_ready(
        owner_engine, tmp_path):
    """A controller that starts while routing is being edited: the change's event went out
    before its private queue existed, so only the catch-up at bind can apply it."""
    ip = f"198.18.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250 + 1}"
    cache = RoutingCache()
    cache.table()
    carrier_id, gateway_id = _add_carrier(owner_engine, ip)
    listener = start_routing_listener(RoutingReloader(cache, tmp_path, lambda: [], sleep=lambda _s: None))
    try:
        assert listener.ready.wait(10)
        assert cache.identify_carrier(ip) == (carrier_id, gateway_id)
        assert listener.catch_ups == 1
    finally:
        listener.stop()


class _FailingOnce(RoutingReloader):
    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.failures = 1

    def sync(self, *, force: bool = False):
        if self.failures:
            self.failures -= 1
            raise RuntimeError("test: database unreachable")
        return super().sync(force=force)


@pytest.mark.usefixtures("amqp_vhost")
def test_given_the_catch_up_fails_when_the_listener_binds_then_it_reconnects_and_is_ready_only_once_caught_up(
        owner_engine, tmp_path):
    ip = f"198.18.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250 + 1}"
    cache = RoutingCache()
    cache.table()
    carrier_id, gateway_id = _add_carrier(owner_engine, ip)
    reloader = _FailingOnce(cache, tmp_path, lambda: [], sleep=lambda _s: None)
    listener = start_routing_listener(reloader, backoff_seconds=(0.05, 0.2))
    try:
        assert listener.ready.wait(10)
        assert listener.consumer.connects == 2 and listener.catch_ups == 1
        assert cache.identify_carrier(ip) == (carrier_id, gateway_id)
    finally:
        listener.stop()
