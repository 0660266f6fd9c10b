"""The switch's global variables as the shipped ``fs-conf/vars.xml`` sets them (``X-PRE-PROCESS
cmd="set"``), so the simulator decides what FreeSWITCH decides from its configuration — e.g.
which codecs a bridged leg offers. A channel variable of the same name wins, as in
switch_channel_get_variable_dup (channel, then caller profile, then globals)."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

VARS_XML = Path(__file__).resolve().parents[2] / "fs-conf" / "vars.xml"
_SET = re.compile(r'<X-PRE-PROCESS\s+cmd="set"\s+data="([^"=]+)=([^"]*)"\s*/>')


@lru_cache(maxsize=1)
def shipped_globals() -> dict[str, str]:
    return {name: value for name, value in _SET.findall(VARS_XML.read_text())}


def variable(channel_vars: dict[str, str], name: str) -> str:
    return channel_vars.get(name, shipped_globals().get(name, ""))


def bridged_leg_offer(channel_vars: dict[str, str], caller_codec: str) -> list[str]:
    """switch_core_media_prepare_codecs for a leg originated from an unanswered-or-answered
    caller: only the caller's codec, unless ``media_mix_inbound_outbound_codecs`` is true —
    then the caller's codec followed by the profile's outbound codec preferences."""
    if variable(channel_vars, "media_mix_inbound_outbound_codecs").lower() not in ("true", "yes", "on", "1"):
        return [caller_codec]
    prefs = [c for c in variable(channel_vars, "outbound_codec_prefs").split(",") if c]
    return [caller_codec] + [c for c in prefs if c != caller_codec]
