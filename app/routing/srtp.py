"""A carrier's SRTP policy as FreeSWITCH channel variables (SDES, RFC 4568).

FreeSWITCH 1.10 has no per-profile SRTP setting: each leg reads ``rtp_secure_media_outbound``
(a leg we originate) or ``rtp_secure_media_inbound`` (a leg that called us), else
``rtp_secure_media``, as ``<mode>[:<suite>:<suite>...]`` (switch_core_media.c
parse_crypto_prefs). Unset, an inbound leg is ``optional`` and an outbound one ``forbidden``.
The suites are the two every SDES implementation has, strongest tag first; the AES-GCM
suites are left out because many carriers' SBCs still refuse an offer that lists them.
"""
from __future__ import annotations

SDES_SUITES: tuple[str, ...] = ("AES_CM_128_HMAC_SHA1_80", "AES_CM_128_HMAC_SHA1_32")
OUTBOUND_VARIABLE = "rtp_secure_media_outbound"
# FreeSWITCH's word for each of our modes ("off" is FreeSWITCH "forbidden": no crypto offered
# and an SRTP answer refused)
_FS_MODE = {"off": "forbidden", "optional": "optional", "mandatory": "mandatory"}


def leg_value(mode: str) -> str:
    """``rtp_secure_media*`` value for a carrier's ``srtp`` mode (KeyError for an unknown one:
    the column's CHECK and the API only allow SRTP_MODES)."""
    fs_mode = _FS_MODE[mode]
    if fs_mode == "forbidden":
        return fs_mode
    return ":".join((fs_mode, *SDES_SUITES))
