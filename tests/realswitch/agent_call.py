"""The set-up the real-switch transfer tests share: a sipp caller in a queue answered by the
first of two sipp agents, that agent on the agent channel (the real ``sbc api``). Blind
transfers (test_agent_transfer_realswitch.py), consultations, swaps and three-way calls
(test_agent_consult_realswitch.py) start from here."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Optional

from tests.plugins.eventually import eventually
from tests.realswitch import agents as sip_agents
from tests.realswitch import test_agent_channel_realswitch as channel_tests


@dataclass
class AgentCall:
    first: sip_agents.SipAgent      # the agent who answered (its channel: ``client``)
    second: sip_agents.SipAgent     # the other agent of the queue, registered, not yet available
    client: Any                     # the first agent's channel (ChannelClient)
    number: str                     # the number the caller dialled
    caller: Any                     # the sipp caller (SippProcess: ``.wait()``)
    call_id: str                    # the caller's leg
    leg: str                        # the first agent's leg


def agent_leg(tenant, agent) -> str:
    """The agent's leg of the call it is on (the queue's engaged mark)."""
    return eventually(lambda: sip_agents.presence().agent_leg(str(tenant.account_id), agent.id), timeout=10,
                      what="the agent's leg in presence")[1]


@contextmanager
def caller_with_agent(product, tenant, channel_queue, sipp, real_switch, *, caller_scenario: str = "uac-bye-after.xml",
                      caller_seconds: int | None = None, codec: str = "PCMU",
                      first_scenario: str = "agent-answer-ooc.xml", second_scenario: str = "agent-answer-ooc.xml",
                      phone_seconds: int = 60, second_on: Optional[tuple[Any, Any]] = None) -> Iterator[AgentCall]:
    """Both agents' phones registered (answering with ``first_scenario``/``second_scenario``), the
    caller (``caller_scenario``; ``caller_seconds``: when uac-bye-after hangs up) connected to
    the first agent. The second agent's phone registers on ``second_on`` (``(switch, sipp)``:
    another node, tests/realswitch/nodes.py), else on the caller's switch. Closes the channel
    and waits for the phones at the end."""
    queue, (first, second) = channel_queue
    second_switch, second_sipp = second_on or (real_switch, sipp)
    phones = [sip_agents.register(sipp, real_switch, first, first_scenario, seconds=phone_seconds),
              sip_agents.register(second_sipp, second_switch, second, second_scenario, seconds=phone_seconds)]
    client = channel_tests._channel(product, tenant, first)
    try:
        sip_agents.make_available(tenant, first)  # longest idle: offered first
        number = tenant.number_for([{"verb": "queue", "name": queue["name"]}])
        extra = ("-d", str(caller_seconds * 1000)) if caller_seconds is not None else ()
        caller = sipp.start_calls(number, codec=codec, scenario=caller_scenario, extra=extra)
        offer = client.expect("offer", timeout=20)
        client.expect("call", lambda m: m["phase"] == "connected", timeout=20)
        yield AgentCall(first, second, client, number, caller, offer["offerId"], agent_leg(tenant, first))
    finally:
        client.close()
        for phone in phones:
            phone.wait(phone_seconds + 10)
