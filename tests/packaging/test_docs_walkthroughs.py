"""The newcomer walkthroughs stay runnable: every shell block that uses ``$TOKEN`` defines it
first (the SDK README used it undefined), and docs/agents.md's real-softphone walkthrough names
the settings a phone needs with the ports the shipped configuration really uses."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WALKTHROUGHS = ("README.md", "docs/agents.md", "sdk/agent-js/README.md")


def _bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, re.S)


def test_every_shell_block_that_uses_token_defines_it_first():
    for name in WALKTHROUGHS:
        for block in _bash_blocks((ROOT / name).read_text()):
            used = block.find("$TOKEN")
            if used >= 0:
                defined = block.find("TOKEN=$(")
                assert 0 <= defined < used, f"{name}: $TOKEN used before it is defined:\n{block[:300]}"


def test_the_softphone_walkthrough_gives_the_agent_profile_as_outbound_proxy_and_the_subdomain_as_domain():
    doc = (ROOT / "docs" / "agents.md").read_text()
    section = doc[doc.index("## First agent with a real softphone"):doc.index("## Agent state")]
    port = re.search(r'cmd="set" data="agent_sip_port=(\d+)"', (ROOT / "fs-conf" / "vars.xml").read_text()).group(1)
    assert "outbound proxy | the agents' profile" in section and f"127.0.0.1:{port}" in section
    assert "`sip_domain`: the account's subdomain" in section
    assert "/sip-credentials" in section and "sip_username" in section and "sip_password" in section
    assert f'outbound="sip:127.0.0.1:{port}"' in section  # baresip
    assert f"sip:127.0.0.1:{port} PASSWORD" in section     # linphonec
