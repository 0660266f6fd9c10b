"""NodeWatchdog against the simulated inbound event socket over real TCP: a switch that hangs
with its sockets open is declared frozen after the configured silent probes; a slow one is not."""
from __future__ import annotations

import logging

import gevent
import pytest

from app.voice.watchdog import NodeWatchdog
from esl.inbound import InboundConnection
from tests.plugins.eventually import eventually

INTERVAL, TIMEOUT, STRIKES = 0.05, 0.2, 3


@pytest.fixture
def node(inbound_sim):
    host, port = inbound_sim.address
    conn = InboundConnection(host, port, "ClueCon", backoff_initial=0.05, backoff_max=0.2,
                             connect_timeout=0.3)
    yield conn
    conn.close()


@pytest.fixture
def watch(node):
    """``watch(on_frozen=None)``: a started watchdog with test-sized timing, stopped at teardown."""
    dogs: list[NodeWatchdog] = []

    def start(on_frozen=None) -> NodeWatchdog:
        dog = NodeWatchdog(node, on_frozen, interval=INTERVAL, timeout=TIMEOUT, strikes=STRIKES).start()
        dogs.append(dog)
        return dog

    yield start
    for dog in dogs:
        dog.stop()


def test_given_a_switch_that_freezes_when_probes_go_unanswered_then_it_is_declared_frozen_within_the_strikes(
        inbound_sim, node, watch, caplog):
    frozen_calls = []
    node.connect()
    dog = watch(lambda: frozen_calls.append(node.connected))
    eventually(lambda: dog.probes >= 2)
    assert dog.frozen_count == 0

    inbound_sim.freeze()
    probes_at_freeze = dog.probes
    with caplog.at_level(logging.ERROR, logger="app.voice.watchdog"):
        eventually(lambda: dog.frozen_count == 1)
    # the probe in flight when the switch froze may be one of the silent ones
    assert dog.probes - probes_at_freeze <= STRIKES
    assert frozen_calls == [True], "on_frozen runs once, before the link is dropped"
    assert any("frozen" in r.getMessage() for r in caplog.records if r.levelno == logging.ERROR)
    eventually(lambda: not node.connected)


def test_given_a_frozen_switch_when_it_thaws_then_the_link_reconnects_and_reconciles(inbound_sim, node, watch):
    reconciled = []
    node.on_reconcile = reconciled.append
    node.connect()
    dog = watch()
    inbound_sim.freeze()
    eventually(lambda: dog.frozen_count == 1)
    gevent.sleep(1.0)  # scenario: time passes frozen; reconnect attempts cannot even get an auth/request
    assert not node.connected and node.reconnects == 0

    inbound_sim.thaw()
    eventually(lambda: node.connected and node.reconnects == 1)
    eventually(lambda: reconciled == [[]])
    probes = dog.probes
    eventually(lambda: dog.probes >= probes + 2 * STRIKES)
    assert dog.frozen_count == 1, "the thawed switch answers again"


def test_given_a_slow_but_answering_switch_when_probed_then_it_is_never_declared_frozen(inbound_sim, node, watch):
    inbound_sim.api_delay = TIMEOUT / 2  # every reply takes longer than the probe interval
    node.connect()
    dog = watch()
    eventually(lambda: dog.probes >= 4 * STRIKES)
    assert dog.frozen_count == 0
    assert node.connected and node.reconnects == 0


def test_given_a_switch_silent_for_fewer_probes_than_the_strikes_when_it_answers_again_then_not_frozen(
        inbound_sim, node, watch):
    node.connect()
    dog = watch()
    for _ in range(3):  # each pause costs 1 to STRIKES - 1 silent probes, then answers
        inbound_sim.freeze()
        start = dog.probes  # one may be in flight, unanswered
        # the next probe times out before this one starts; the thaw lets this one be answered
        eventually(lambda: dog.probes >= start + STRIKES - 1)
        inbound_sim.thaw()
        eventually(lambda: dog.probes >= start + STRIKES + 1)
    assert dog.frozen_count == 0
    assert node.connected and node.reconnects == 0


def test_given_a_node_not_connected_when_the_watchdog_runs_then_it_does_not_probe(inbound_sim, node, watch):
    dog = watch()
    gevent.sleep(10 * INTERVAL)  # scenario: ten probe intervals pass with no node connected
    assert dog.probes == 0
    node.connect()
    eventually(lambda: dog.probes >= 1)


def test_given_a_running_watchdog_when_stopped_then_it_probes_no_more(inbound_sim, node, watch):
    node.connect()
    dog = watch()
    eventually(lambda: dog.probes >= 1)
    dog.stop()
    probes = dog.probes
    gevent.sleep(10 * INTERVAL)  # scenario: ten probe intervals pass after the stop
    assert dog.probes == probes
    assert inbound_sim.commands.count("api status") == probes
