"""A second FreeSWITCH node for the cross-node tests (docs/agents.md "Several FreeSWITCH
nodes"): node B shares node A's ``generated/`` folder (the volume every node mounts in
production: agents' directory, ACLs), and the package's controller is restarted with both
nodes in ``freeswitch.nodes`` for the module, then restarted with node A alone again.

A test module takes the fixtures as module names (``node_b, two_nodes = nodes.node_b,
nodes.two_nodes``): module-scoped, so each module has a node B of its own.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator

import pytest

from app.config import RuntimeConfig, set_value
from tests.realswitch import agents as sip_agents
from tests.realswitch.freeswitch import RealSwitch, SwitchPorts, freeswitch_tree
from tests.realswitch.provision import poll

ESL_PASSWORD = "realswitch-node-b-secret"
CONTROLLER_RESTART_SECONDS = 30


class PeerSwitch(RealSwitch):
    """A second node: the shipped config, with the first node's generated folder."""

    def __init__(self, tree: Path, workdir: Path, ports: SwitchPorts, password: str,
                 shared_generated: Path) -> None:
        super().__init__(tree, workdir, ports, password)
        self.shared_generated = shared_generated

    def install_config(self) -> None:
        super().install_config()
        generated = self.conf / "generated"
        if generated.is_symlink() or generated.is_file():
            generated.unlink()
        elif generated.exists():
            shutil.rmtree(generated)
        os.symlink(self.shared_generated, generated)


def _connected_to(product, port: int) -> int:
    return product.controller.log_text().count(f"inbound ESL connected to 127.0.0.1:{port}")


def restart_controller(product, wait_for: list[int]) -> None:
    """Restart the package's controller; returns once it connected to each ESL port anew."""
    before = {port: _connected_to(product, port) for port in wait_for}
    product.controller.stop()
    product.start_controller(wait=False)
    assert poll(lambda: all(_connected_to(product, p) > before[p] for p in wait_for), CONTROLLER_RESTART_SECONDS), \
        product.controller.log_tail()


@pytest.fixture(scope="module")
def node_b(real_switch: RealSwitch, realswitch_workdir: Path) -> Iterator[RealSwitch]:
    switch = PeerSwitch(freeswitch_tree(), realswitch_workdir / "fs-b", SwitchPorts.pick(),
                        ESL_PASSWORD, real_switch.generated_dir)
    switch.start()
    try:
        yield switch
    finally:
        switch.stop()


@pytest.fixture(scope="module")
def two_nodes(product, real_switch: RealSwitch, node_b: RealSwitch) -> Iterator[RealSwitch]:
    """The controller linked to node A and node B, each with its agent-profile address."""
    node_a_alone = RuntimeConfig.load().get("freeswitch.nodes")
    set_value("freeswitch.nodes", [
        {"host": "127.0.0.1", "port": real_switch.ports.esl, "password": real_switch.password,
         "agent_sip_port": real_switch.ports.agent_sip},
        {"host": "127.0.0.1", "port": node_b.ports.esl, "password": node_b.password,
         "agent_sip_port": node_b.ports.agent_sip}], announce=False)
    try:
        restart_controller(product, [real_switch.ports.esl, node_b.ports.esl])
        # the cluster ACL reached both nodes (reloadacl on connect)
        for switch in (real_switch, node_b):
            assert poll(lambda s=switch: s.api("acl 127.0.0.1 cluster", check=False).strip() == "true", 15)
        yield node_b
    finally:
        # node A alone again, for the modules that follow; nothing else of the package's
        # configuration changes (the running workers keep their health port)
        set_value("freeswitch.nodes", node_a_alone, announce=False)
        restart_controller(product, [real_switch.ports.esl])
        sip_agents.presence().redis.delete(sip_agents.presence().nodes_key())
