"""Carrier and gateway bodies. REGISTER credentials are accepted and stored encrypted, never
returned (only ``has_register_password``); the switch registers a gateway with ``register``."""
from __future__ import annotations

import ipaddress
import re
from datetime import datetime, timezone
from typing import Any

import marshmallow as ma
from marshmallow import validate
from redis.exceptions import RedisError

from app import limits
from app.models.enums import SRTP_MODES, TRANSPORTS
from app.redis_pool import shared_redis
from app.routing.gateway_registration import read_state
from app.settings import get_settings


class CarrierWriteSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=validate.Length(min=1, max=255))
    description = ma.fields.String(allow_none=True, validate=validate.Length(max=2000))
    is_active = ma.fields.Boolean()
    tech_prefix = ma.fields.String(allow_none=True, validate=validate.Regexp(
        r"^[0-9#*]{0,32}\Z", error="Digits, # and * only (0-32)."),
        metadata={"description": "Dialled before the number; \"\" or null: none"})
    e164_leading_plus = ma.fields.Boolean(metadata={
        "description": "Dial the number with a leading + (after tech_prefix)"})
    srtp = ma.fields.String(validate=validate.OneOf(SRTP_MODES), metadata={
        "description": "SRTP (SDES) on this carrier's legs: off (plain RTP), optional (offer "
                       "both), mandatory (SRTP or no call); docs/trunks.md \"SRTP\""})

    @ma.post_load
    def _no_prefix_is_null(self, data: dict, **_: object) -> dict:
        if data.get("tech_prefix") == "":
            data["tech_prefix"] = None  # one spelling of "none" in the database
        return data


class CarrierPatchSchema(CarrierWriteSchema):
    """PATCH body (partial=True)."""


class CarrierSchema(ma.Schema):
    id = ma.fields.UUID()
    name = ma.fields.String()
    description = ma.fields.String(allow_none=True)
    is_active = ma.fields.Boolean()
    tech_prefix = ma.fields.String(allow_none=True)
    e164_leading_plus = ma.fields.Boolean()
    srtp = ma.fields.String()
    platform = ma.fields.Function(lambda c: c.account_id is None, metadata={
        "description": "Platform carrier: usable in LCR and campaigns, not editable"})
    created_at = ma.fields.AwareDateTime()


def _ipv4(value: str) -> None:
    try:
        ip = ipaddress.IPv4Address(value)
    except ValueError as exc:
        raise ma.ValidationError("Not an IPv4 address.") from exc
    if ip.is_multicast or ip == ipaddress.IPv4Address("255.255.255.255"):
        raise ma.ValidationError("Multicast and broadcast addresses cannot be gateways.")


# RFC 1123 host name (labels of letters, digits, '-'); an IP literal is not a host name (use ipv4).
# One label is accepted (a resolver's search domain or hosts file may know it), as 127.0.0.1 is.
_HOST_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_HOST_NAME = re.compile(rf"^{_HOST_LABEL}(\.{_HOST_LABEL})*\Z")


def normalise_host(value: str) -> str:
    return value.strip().lower().rstrip(".")


def _host(value: str) -> None:
    name = normalise_host(value)
    if len(name) > 253 or not _HOST_NAME.match(name):
        raise ma.ValidationError("Not a host name (labels of letters, digits and '-').")
    if name.replace(".", "").isdigit():
        raise ma.ValidationError("An IP address goes in ipv4.")


class GatewayWriteSchema(ma.Schema):
    ipv4 = ma.fields.String(validate=_ipv4, metadata={"description": "IPv4 address (or network, inbound); or give host"})
    host = ma.fields.String(validate=_host, metadata={
        "description": "Outbound-only: the carrier's DNS name (FreeSWITCH resolves it); instead of ipv4. "
                       "A registering host gateway's public IPv4 addresses are admitted for its calls"})
    netmask = ma.fields.Integer(validate=validate.Range(min=0, max=32), metadata={
        "description": "Prefix length: 32 = exactly this address, less = a CIDR network (inbound)"})
    port = ma.fields.Integer(validate=validate.Range(min=1, max=65535))
    transport = ma.fields.String(validate=validate.OneOf(TRANSPORTS), metadata={
        "description": "udp | tcp | tls (tls: the carrier's certificate is checked, FS_TLS on)"})
    inbound = ma.fields.Boolean()
    outbound = ma.fields.Boolean()
    is_active = ma.fields.Boolean()
    register_username = ma.fields.String(allow_none=True, validate=validate.Length(min=1, max=255))
    register_password = ma.fields.String(allow_none=True, load_only=True, validate=validate.Length(min=1, max=255))
    register_realm = ma.fields.String(allow_none=True, validate=validate.Length(min=1, max=255))
    register = ma.fields.Boolean(metadata={
        "description": "Register to the carrier with register_username/register_password"})
    register_expiry = ma.fields.Integer(validate=validate.Range(
        min=limits.GATEWAY_REGISTER_EXPIRY_MIN_SECONDS, max=limits.GATEWAY_REGISTER_EXPIRY_MAX_SECONDS),
        metadata={"description": "Seconds the registration asks for"})
    register_retry = ma.fields.Integer(validate=validate.Range(
        min=limits.GATEWAY_REGISTER_RETRY_MIN_SECONDS, max=limits.GATEWAY_REGISTER_RETRY_MAX_SECONDS),
        metadata={"description": "Seconds before a failed registration is tried again"})

    @ma.validates_schema
    def _one_address(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("ipv4") is not None and data.get("host") is not None:
            raise ma.ValidationError({"host": ["Give ipv4 or host, not both."]})

    @ma.post_load
    def _normalise(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if data.get("host") is not None:
            data["host"] = normalise_host(data["host"])
        return data


class GatewayPatchSchema(GatewayWriteSchema):
    """PATCH body (partial=True)."""


def registration_view(gateway: Any) -> dict[str, Any] | None:
    """The registration state the controllers keep in Redis (app.routing.gateway_registration)."""
    if not gateway.register:
        return None
    settings = get_settings()
    try:
        reg = read_state(shared_redis(settings.redis_url), settings.redis_key_prefix, gateway.id)
    except RedisError:
        return None
    if reg is None:
        return None
    return {"state": reg.get("state"), "sip_status": reg.get("sipStatus"), "phrase": reg.get("phrase"),
            "changed_at": datetime.fromtimestamp(reg.get("changedAt") or 0, timezone.utc).isoformat()}


class GatewaySchema(ma.Schema):
    id = ma.fields.UUID()
    carrier_id = ma.fields.UUID()
    ipv4 = ma.fields.String(allow_none=True)
    host = ma.fields.String(allow_none=True)
    netmask = ma.fields.Integer()
    network = ma.fields.Function(lambda g: None if g.ipv4 is None else
                                 f"{ipaddress.ip_network(f'{g.ipv4}/{g.netmask}', strict=False)}")
    port = ma.fields.Integer()
    transport = ma.fields.String()
    inbound = ma.fields.Boolean()
    outbound = ma.fields.Boolean()
    is_active = ma.fields.Boolean()
    register_username = ma.fields.String(allow_none=True)
    register_realm = ma.fields.String(allow_none=True)
    register = ma.fields.Boolean()
    register_expiry = ma.fields.Integer()
    register_retry = ma.fields.Integer()
    has_register_password = ma.fields.Function(lambda g: g.register_password_encrypted is not None)
    registration = ma.fields.Function(registration_view, metadata={
        "description": "A registering gateway's last registration state as the switch reported it "
                       "({state: REGED | FAIL_WAIT | TRYING | ..., changed_at, sip_status, phrase}); "
                       "null when it does not register, before the first report, or when Redis is away"})
    health = ma.fields.String(metadata={
        "description": "Live: up | down (the LCR skips it) | not_probed (inactive or inbound only) | unknown "
                       "(health store unreachable); GET only"})
    created_at = ma.fields.AwareDateTime()


def host_problem(netmask: int, inbound: bool, outbound: bool) -> dict[str, Any] | None:
    """A host-name gateway is one outbound target; the inbound ACL admits addresses only."""
    if inbound:
        return {"host": ["An inbound gateway needs ipv4 (an address or network): the ACL admits addresses, not names."]}
    if not outbound:
        return {"outbound": ["A host-name gateway is an outbound gateway."]}
    if netmask != 32:
        return {"netmask": ["A host-name gateway is one host: netmask must be 32."]}
    return None


def network_problem(ipv4: str, netmask: int, inbound: bool, outbound: bool) -> dict[str, Any] | None:
    """Field errors for a combination that is syntactically valid but makes no sense."""
    if not inbound and not outbound:
        return {"inbound": ["A gateway must be inbound, outbound or both."]}
    try:
        ipaddress.ip_network(f"{ipv4}/{netmask}", strict=True)
    except ValueError:
        base = ipaddress.ip_network(f"{ipv4}/{netmask}", strict=False).network_address
        return {"ipv4": [f"{ipv4}/{netmask} has host bits set; use {base}/{netmask}."]}
    if inbound and netmask < limits.GATEWAY_MIN_INBOUND_PREFIX:
        return {"netmask": [f"An inbound network must be /{limits.GATEWAY_MIN_INBOUND_PREFIX} or narrower."]}
    if outbound and netmask != 32:
        return {"netmask": ["An outbound gateway is one host: netmask must be 32."]}
    if netmask == 32 and ipaddress.IPv4Address(ipv4).is_unspecified:
        return {"ipv4": ["0.0.0.0 is not a host."]}
    return None
