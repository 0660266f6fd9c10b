"""Cross-node queue offers (docs/agents.md "Several FreeSWITCH nodes") on the simulator: an
agent registered on a cluster peer whose agent-profile address is known is offered through
that node; one registered on a switch nobody knows the address of is never offered. The real
two-node proof is tests/realswitch/test_cross_node_offers.py."""
from __future__ import annotations

import uuid

import pytest

from app.config import FreeswitchNode
from app.contact.cluster import agent_leg, render_cluster_acl
from tests.simulator import Call

PEER_ADDRESS = "10.0.0.2:5070"


@pytest.fixture
def peer(centre):  # noqa: F811
    """A cluster peer known to the controllers (its Core-UUID → agent-profile address)."""
    core_uuid = f"peer-{uuid.uuid4()}"
    centre.presence.node_seen(core_uuid, PEER_ADDRESS)
    yield core_uuid
    centre.presence.redis.hdel(centre.presence.nodes_key(), core_uuid)


def test_given_the_longest_idle_agent_registered_on_a_known_peer_then_it_is_offered_through_that_node(
        run_on_call, centre, peer):  # noqa: F811
    first, _second = centre.agents
    centre.presence.registered(centre.subdomain, first.sip_username, 60, node=peer)
    run = run_on_call(Call().bridge_answers(talk=0.1), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.data["agentId"] == str(first.id)
    assert run.bridges()[0].endswith(
        f"[sip_h_X-SBC-Agent-Domain={centre.subdomain}]sofia/internal/{first.sip_username}@{PEER_ADDRESS}")


def test_given_an_agent_on_a_peer_and_one_on_the_callers_switch_then_ring_all_rings_both_in_one_bridge(
        run_on_call, centre, peer, owner_engine):  # noqa: F811
    from sqlalchemy import text

    first, second = centre.agents
    with owner_engine.begin() as db:
        db.execute(text("UPDATE queues SET strategy = 'ring_all' WHERE id = :id"), {"id": centre.queue_id})
    centre.presence.registered(centre.subdomain, first.sip_username, 60, node=peer)
    run = run_on_call(Call().bridge_answers(talk=0.1), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    dial = run.bridges()[0]
    assert f"sip_h_X-SBC-Agent-Domain={centre.subdomain}]sofia/internal/{first.sip_username}@{PEER_ADDRESS}" in dial
    assert f"]user/{second.sip_username}@{centre.subdomain}" in dial


def test_given_an_agent_on_a_switch_whose_address_nobody_knows_then_it_is_not_offered(
        run_on_call, centre):  # noqa: F811
    first, second = centre.agents
    centre.presence.registered(centre.subdomain, first.sip_username, 60, node=f"unknown-{uuid.uuid4()}")
    run = run_on_call(Call().bridge_answers(talk=0.1), [{"verb": "queue", "name": "support"}],
                      account_id=centre.account_id, contact=centre.contact)
    assert run.outcome.data["agentId"] == str(second.id)
    assert run.bridges()[0].endswith(f"user/{second.sip_username}@{centre.subdomain}")


def test_given_one_node_then_the_cluster_acl_admits_nobody_and_with_two_it_admits_their_sip_hosts():
    one = [FreeswitchNode("127.0.0.1", 8021, "x")]
    assert "<node" not in render_cluster_acl(one)
    two = [FreeswitchNode("127.0.0.1", 8021, "x", sip_host="10.0.0.1"),
           FreeswitchNode("127.0.0.2", 8021, "x", sip_host="10.0.0.2", agent_sip_port=5080)]
    acl = render_cluster_acl(two)
    assert '<node type="allow" cidr="10.0.0.1/32"/>' in acl and '<node type="allow" cidr="10.0.0.2/32"/>' in acl
    assert two[1].agent_sip_address == "10.0.0.2:5080" and one[0].agent_sip_address == "127.0.0.1:5070"


def test_given_no_peer_address_then_the_offer_is_the_local_user_dial():
    assert agent_leg("ag1", "acme.example", "") == ([], "user/ag1@acme.example")


def test_given_a_node_entry_with_a_bad_agent_sip_port_then_the_nodes_setting_is_invalid():
    from app.config import _valid_nodes

    assert _valid_nodes([{"host": "a", "port": 8021, "sip_host": "10.0.0.1", "agent_sip_port": 5070}])
    assert not _valid_nodes([{"host": "a", "port": 8021, "agent_sip_port": 70000}])
    assert not _valid_nodes([{"host": "a", "port": 8021, "agent_sip_port": "5070"}])
    assert not _valid_nodes([{"host": "a", "port": 8021, "sip_host": 5}])
