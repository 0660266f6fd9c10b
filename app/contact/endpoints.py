"""An agent's ``contact`` (``/api/agents``): the three forms docs/api.md promises, and the
``dial`` target each one becomes when the platform rings the agent (a callback's agent leg:
app/calls/route.py). One parser for the API's validation and for the dial, so a contact the
API accepted is always one the ``dial`` verb accepts.

| contact                          | dial target                        | dialled as |
|----------------------------------|------------------------------------|------------|
| ``user/<sip user>``              | ``user``                           | ``user/<sip user>@<account subdomain>``: the account's own directory only |
| ``sip:<user>@<host>[:port][;transport=…]`` | ``sip`` | ``sofia/external/<user>@<host>…``: the host must be on ``/api/sip-targets`` and pass the address policy |
| ``sofia/internal/<user>@<host>…``| ``sip`` (``sip:<user>@<host>…``)   | ``sofia/internal/<user>@<host>…`` (from the agents' profile), under the same host policy |

The URI of the last two is the ``dial`` verb's (app.calls.sip_targets.parse_sip_uri): no
``maddr``, ``fs_path``, headers or parameters but ``transport``; ``why_not`` says what was refused.

An agent with SIP credentials is rung at its registered ``user/`` whatever its contact says
(the queue's offers ring the same user).
"""
from __future__ import annotations

import re
from typing import Optional

from app.calls.sip_targets import USER_PATTERN, InvalidSipUri, parse_sip_uri

SOFIA_INTERNAL_PREFIX = "sofia/internal/"
FORMS = "user/1001, sip:1001@pbx.example.com or sofia/internal/1001@pbx.example.com"
_USER = re.compile(USER_PATTERN)


def contact_profile(contact: Optional[str]) -> str:
    """The sofia profile the contact's ``sip`` target leaves from: the agents' ``internal``
    profile for the ``sofia/internal/`` form (what it names), else the trunk side."""
    return "internal" if contact and contact.startswith(SOFIA_INTERNAL_PREFIX) else "external"


def dial_target(contact: str) -> Optional[dict[str, str]]:
    """The ``dial`` target of a contact, or None when it is none of the three forms."""
    try:
        return _target(contact)
    except InvalidSipUri:
        return None


def why_not(contact: str) -> Optional[str]:
    """Why a ``sip:``/``sofia/internal/`` contact's URI is refused (the parser's reason), else
    None: the API names the part (``fs_path``, ``maddr``, headers…) rather than only the forms."""
    try:
        _target(contact)
    except InvalidSipUri as exc:
        return str(exc)
    return None


def _target(contact: str) -> Optional[dict[str, str]]:
    if contact.startswith("user/"):
        name = contact[len("user/"):]
        return {"type": "user", "name": name} if _USER.fullmatch(name) else None
    if contact.startswith(SOFIA_INTERNAL_PREFIX):
        rest = contact[len(SOFIA_INTERNAL_PREFIX):]
        if rest.lower().startswith(("sip:", "sips:")):
            return None
        parse_sip_uri(rest)
        return {"type": "sip", "name": "sip:" + rest}
    if contact.lower().startswith(("sip:", "sips:")):
        parse_sip_uri(contact, scheme_required=True)
        return {"type": "sip", "name": contact}
    return None
