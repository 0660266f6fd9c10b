"""Least-cost routing compiled to pure data, with the bridge string FreeSWITCH dials.

Selection (SPEC "Least-cost routing"): the account's plans come before platform plans; within
those, plans by priority. In each plan routes are tried by priority ascending and the first
route whose regex matches the dialled number wins (the regex is anchored at the start of the
digits, "regex prefix"). Regexes run on RE2 (``google-re2``): linear time whatever a tenant
writes (see ``compile_route_regex``). Its carriers are tried priority ascending, then workload descending;
each carrier contributes its active outbound gateways, minus those the health probe marks down.

Speed: a plan indexes its routes by the literal digits each regex must start with (``^1212``
-> "1212"), so a lookup probes at most len(number) dict keys and tests only the regexes that
can match, instead of running every regex of every plan.
"""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import AbstractSet, Callable, Protocol

import re2

try:  # Python 3.11+: the regex parser moved; only parses (never matches) to find a literal prefix
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older interpreters
    import sre_parse as _sre_parse  # type: ignore[no-redef]

from app import limits
from app.errors import ValidationFailed
from app.routing import srtp
from app.routing.causes import fail_on_single_reject_value
from app.routing.rows import CarrierEntryRow, CarrierRow, GatewayRow, RouteRow, RoutingRows

GATEWAY_NAME_PREFIX = "gw_"
SOFIA_PROFILE = "external"
_NUMBER_JUNK = re.compile(r"[\s\-().]")
_DIGITS = re.compile(r"\d{1,32}")


def gateway_name(gateway_id: uuid.UUID) -> str:
    """Sofia gateway name derived from the row id: stable, unique, and reversible without a
    database round trip (the health handler maps ``Gateway: gw_<hex>`` back to the id)."""
    return f"{GATEWAY_NAME_PREFIX}{gateway_id.hex}"


def gateway_id_from_name(name: str) -> uuid.UUID | None:
    if not name.startswith(GATEWAY_NAME_PREFIX):
        return None
    try:
        return uuid.UUID(hex=name[len(GATEWAY_NAME_PREFIX):])
    except ValueError:
        return None


def normalize_number(number: str) -> str | None:
    """Digits-only E.164 form used for matching ("+1 (212) 555-0100" -> "12125550100");
    None when anything but digits remains (LCR applies to phone numbers only)."""
    cleaned = _NUMBER_JUNK.sub("", number or "")
    if cleaned.startswith("+"):
        cleaned = cleaned[1:]
    return cleaned if _DIGITS.fullmatch(cleaned) else None


class RoutePattern(Protocol):
    """A compiled route regex (RE2): ``match`` is anchored at the start, like ``re.match``."""

    def match(self, text: str) -> object | None: ...


def _re2_options() -> re2.Options:
    options = re2.Options()
    options.max_mem = limits.ROUTE_REGEX_MAX_MEMORY_BYTES
    options.log_errors = False  # a refused pattern is the caller's 422, not a line on stderr
    return options


_RE2_OPTIONS = _re2_options()


def compile_route_regex(regex: str) -> RoutePattern:
    """Compile a route regex with RE2 or raise ValidationFailed (used by the API on save, too).

    Route regexes are tenant input that every call (and /api/lcr/explain) runs on the one gevent
    hub. Python's backtracking matcher takes exponential time on patterns like ``^(1+)+$``, and
    no save-time heuristic recognises every such shape; RE2 matches in time linear in the
    number's length whatever the pattern. What RE2 cannot compile (look-arounds,
    back-references, ``\\Z``, repeats over 1000, programs over the memory cap) is refused."""
    if not regex or len(regex) > limits.ROUTE_REGEX_MAX_LENGTH:
        raise ValidationFailed(
            f"route regex must be 1..{limits.ROUTE_REGEX_MAX_LENGTH} characters", code="invalid_route_regex"
        )
    try:
        return re2.compile(regex, _RE2_OPTIONS)
    except (re2.error, ValueError) as exc:  # ValueError: text not encodable as UTF-8
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        raise ValidationFailed(
            f"route regex is not supported by the linear-time matcher (RE2 syntax: no look-arounds, "
            f"back-references or \\Z): {reason}", code="invalid_route_regex") from exc


def literal_prefix(regex: str) -> str:
    """The digits every match of ``regex`` (anchored at the start) must start with; "" when
    unknown. Only a prefilter: the full regex (RE2) is still tested on every candidate. Python's
    parser only reads the pattern here; where its reading and RE2's could differ (syntax one of
    them refuses) the prefix is "" (no index), and leading digit literals mean the same in both."""
    try:
        parsed = _sre_parse.parse(regex)
    except Exception:  # noqa: BLE001 - any parser surprise just disables the index for it
        return ""
    if parsed.state.flags & re.IGNORECASE:
        return ""
    out: list[str] = []
    items = list(parsed)
    index = 0
    if items and items[0][0] == _sre_parse.AT and items[0][1] == _sre_parse.AT_BEGINNING:
        index = 1
    for op, arg in items[index:]:
        if op == _sre_parse.LITERAL and chr(arg).isdigit():
            out.append(chr(arg))
            continue
        break
    return "".join(out)


@dataclass(frozen=True)
class GatewayTarget:
    gateway_id: uuid.UUID
    name: str
    host: str  # ip:port, for explain output
    srtp: str = "off"  # the carrier's SRTP mode (app.routing.srtp), set on the leg we dial


def dial_prefix(carrier: CarrierRow) -> str:
    """What goes before the dialled digits on this carrier: its ``tech_prefix`` ("" or None:
    none), then ``+`` when it wants E.164 with the leading plus (``sofia/gateway/gw/99#+4930…``)."""
    return (carrier.tech_prefix or "") + ("+" if carrier.e164_leading_plus else "")


@dataclass(frozen=True)
class CompiledCarrier:
    carrier_id: uuid.UUID
    name: str
    tech_prefix: str  # the whole dial prefix: tech_prefix then "+" (dial_prefix)
    priority: int
    workload: int
    gateways: tuple[GatewayTarget, ...]
    unusable: str | None = None  # why this carrier can never be dialled (inactive, no gateway)


@dataclass(frozen=True)
class CompiledRoute:
    route_id: uuid.UUID
    regex: str
    pattern: RoutePattern
    priority: int
    rank: tuple  # total order inside the plan: (priority, regex, id)
    carriers: tuple[CompiledCarrier, ...]
    prefix: str = ""  # literal digits every match starts with (index key)


@dataclass(frozen=True)
class CompiledPlan:
    plan_id: uuid.UUID
    name: str
    account_id: uuid.UUID | None
    service_provider_id: uuid.UUID | None
    routes: tuple[CompiledRoute, ...]
    buckets: dict[str, tuple[CompiledRoute, ...]]
    max_prefix: int
    first_digits: frozenset[str] = frozenset()  # first digits of indexed prefixes ("" excluded)

    def match(self, number: str) -> CompiledRoute | None:
        buckets = self.buckets
        if "" not in buckets and number[:1] not in self.first_digits:
            return None  # no route of this plan can start with this digit
        best: CompiledRoute | None = None
        for length in range(0, min(self.max_prefix, len(number)) + 1):
            candidates = buckets.get(number[:length])
            if not candidates:
                continue
            for route in candidates:  # each bucket is sorted by rank
                if best is not None and route.rank >= best.rank:
                    break
                if route.pattern.match(number):
                    best = route
                    break
        return best


@dataclass(frozen=True)
class Attempt:
    carrier_id: uuid.UUID
    carrier_name: str
    gateway_id: uuid.UUID
    gateway_name: str
    host: str
    dial_number: str
    srtp: str = "off"

    @property
    def endpoint(self) -> str:
        return f"sofia/gateway/{self.gateway_name}/{self.dial_number}"


@dataclass(frozen=True)
class Skipped:
    kind: str  # "carrier" | "gateway"
    id: uuid.UUID
    name: str
    reason: str


@dataclass(frozen=True)
class Explanation:
    number: str
    normalized: str | None
    plans_considered: tuple[str, ...] = ()
    plan_id: uuid.UUID | None = None
    plan_name: str | None = None
    plan_level: str | None = None  # "account" | "platform"
    route_id: uuid.UUID | None = None
    route_regex: str | None = None
    attempts: tuple[Attempt, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    reason: str | None = None  # why there is nothing to dial, when attempts is empty

    @property
    def routable(self) -> bool:
        return bool(self.attempts)

    def to_dict(self) -> dict:
        return {
            "number": self.number,
            "normalized": self.normalized,
            "plansConsidered": list(self.plans_considered),
            "plan": None if self.plan_id is None else {
                "id": str(self.plan_id), "name": self.plan_name, "level": self.plan_level},
            "route": None if self.route_id is None else {
                "id": str(self.route_id), "regex": self.route_regex},
            "attempts": [
                {"carrierId": str(a.carrier_id), "carrier": a.carrier_name,
                 "gatewayId": str(a.gateway_id), "gateway": a.gateway_name, "host": a.host,
                 "endpoint": a.endpoint}
                for a in self.attempts
            ],
            "skipped": [
                {"kind": s.kind, "id": str(s.id), "name": s.name, "reason": s.reason}
                for s in self.skipped
            ],
            "bridge": bridge_string(self) if self.attempts else None,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class LcrTable:
    account_plans: dict[uuid.UUID, tuple[CompiledPlan, ...]]
    platform_plans: tuple[CompiledPlan, ...]
    problems: tuple[str, ...] = ()  # routes/gateways left out at compile time, and why
    route_count: int = 0
    account_providers: dict[uuid.UUID, uuid.UUID | None] = field(default_factory=dict)

    def plans_for(self, account_id: uuid.UUID | None) -> tuple[CompiledPlan, ...]:
        """The account's own plans, then platform plans (all providers', or its provider's)."""
        if account_id is None:
            return tuple(p for p in self.platform_plans if p.service_provider_id is None)
        provider = self.account_providers.get(account_id)
        own = self.account_plans.get(account_id, ())
        return own + tuple(p for p in self.platform_plans
                           if p.service_provider_id is None or p.service_provider_id == provider)

    def select(self, number: str, account_id: uuid.UUID | None) -> tuple[CompiledPlan, CompiledRoute] | None:
        """First plan (account before platform) with a matching route. ``number`` must
        already be normalized."""
        for plan in self.plans_for(account_id):
            route = plan.match(number)
            if route is not None:
                return plan, route
        return None

    def explain(
        self,
        number: str,
        account_id: uuid.UUID | None,
        down_gateways: AbstractSet[uuid.UUID] = frozenset(),
    ) -> Explanation:
        normalized = normalize_number(number)
        if normalized is None:
            return Explanation(number, None, reason="not a phone number (digits, optional leading +)")
        plans = self.plans_for(account_id)
        names = tuple(p.name for p in plans)
        found = self.select(normalized, account_id)
        if found is None:
            return Explanation(number, normalized, names, reason="no route matches this number")
        plan, route = found
        attempts: list[Attempt] = []
        skipped: list[Skipped] = []
        for carrier in route.carriers:
            if carrier.unusable:
                skipped.append(Skipped("carrier", carrier.carrier_id, carrier.name, carrier.unusable))
                continue
            usable = 0
            for gw in carrier.gateways:
                if gw.gateway_id in down_gateways:
                    skipped.append(Skipped("gateway", gw.gateway_id, gw.name,
                                           f"gateway of {carrier.name} is down (OPTIONS ping)"))
                    continue
                usable += 1
                attempts.append(Attempt(carrier.carrier_id, carrier.name, gw.gateway_id, gw.name,
                                        gw.host, f"{carrier.tech_prefix}{normalized}", gw.srtp))
            if not usable and carrier.gateways:
                skipped.append(Skipped("carrier", carrier.carrier_id, carrier.name,
                                       "every outbound gateway is down"))
        return Explanation(
            number, normalized, names, plan.plan_id, plan.name,
            "account" if plan.account_id is not None else "platform",
            route.route_id, route.regex, tuple(attempts), tuple(skipped),
            None if attempts else "every carrier of the matching route is unusable",
        )


# Per-leg channel variables: which carrier and gateway a leg went out on (for the call record).
LCR_CARRIER_VARIABLE = "lcr_carrier_id"
LCR_GATEWAY_VARIABLE = "lcr_gateway_id"
# Set by the dial verb in its bridge's ``{}`` block (so on every leg it rings), one value per
# dial. A routed leg that answers copies it and its carrier variables onto the caller's leg
# (``bridge_export_vars``, switch_ivr_bridge.c check_bridge_export): the caller's leg then says
# which carrier answered *this* dial — a user/sip leg exports nothing, so a value left by an
# earlier dial never matches.
DIAL_ID_VARIABLE = "sbc_dial_id"
EXPORTED_ON_ANSWER = (DIAL_ID_VARIABLE, LCR_CARRIER_VARIABLE, LCR_GATEWAY_VARIABLE)


def answering_carrier(variable: Callable[[str], str | None],
                      dial_id: str) -> tuple[uuid.UUID, uuid.UUID] | None:
    """(carrier, gateway) of the routed leg that answered dial ``dial_id``, read from the
    caller's leg after the bridge (``variable``: Event.variable); None when no routed leg did."""
    if not dial_id or variable(DIAL_ID_VARIABLE) != dial_id:
        return None
    return leg_carrier(variable)


def leg_carrier(variable: Callable[[str], str | None]) -> tuple[uuid.UUID, uuid.UUID] | None:
    """(carrier, gateway) a routed leg was dialled through, read from that leg's own variables
    (its ``[...]`` block); None when it is not a routed leg (``_undef_`` or nothing)."""
    try:
        return uuid.UUID(variable(LCR_CARRIER_VARIABLE) or ""), uuid.UUID(variable(LCR_GATEWAY_VARIABLE) or "")
    except ValueError:
        return None


def bridge_string(explanation: Explanation, *, leg_vars: dict[str, str] | None = None) -> str:
    """``{fail_on_single_reject=...}[vars]sofia/gateway/gw_a/N|[vars]sofia/gateway/gw_b/N``.

    ``|`` makes FreeSWITCH dial the endpoints one after another; the global
    ``fail_on_single_reject`` stops that walk on callee refusals (see app.routing.causes).
    Inside ``{}`` a comma separates variables, so the cause list is escaped as ``\\,``.
    Each leg carries the carrier and gateway ids for the call record, and exports them to
    the caller's leg when it answers a bridge (``answering_carrier``), and its carrier's SRTP
    policy (app.routing.srtp).
    """
    if not explanation.attempts:
        raise ValueError("nothing to dial: " + (explanation.reason or "no attempts"))
    globals_ = "fail_on_single_reject=" + fail_on_single_reject_value().replace(",", "\\,")
    parts = []
    for attempt in explanation.attempts:
        variables = {LCR_CARRIER_VARIABLE: str(attempt.carrier_id),
                     LCR_GATEWAY_VARIABLE: str(attempt.gateway_id),
                     "bridge_export_vars": ",".join(EXPORTED_ON_ANSWER),
                     srtp.OUTBOUND_VARIABLE: srtp.leg_value(attempt.srtp)}
        if leg_vars:
            variables.update(leg_vars)
        rendered = ",".join(f"{k}={_escape_var(v)}" for k, v in variables.items())
        parts.append(f"[{rendered}]{attempt.endpoint}")
    return "{" + globals_ + "}" + "|".join(parts)


def _escape_var(value: str) -> str:
    if any(ch in value for ch in "[]{}|"):
        raise ValueError(f"channel variable value {value!r} contains a dial-string delimiter")
    return value.replace(",", "\\,")


_REGEX_CACHE: dict[str, tuple[RoutePattern, str]] = {}
_REGEX_CACHE_MAX = 200_000


def _compiled(regex: str) -> tuple[RoutePattern, str]:
    """(pattern, literal prefix) for ``regex``, reused across reloads: a reload usually changes
    a handful of routes, and compiling 10,000 regexes again would hold the gevent hub for
    hundreds of milliseconds."""
    hit = _REGEX_CACHE.get(regex)
    if hit is None:
        hit = (compile_route_regex(regex), literal_prefix(regex))
        if len(_REGEX_CACHE) >= _REGEX_CACHE_MAX:
            _REGEX_CACHE.clear()
        _REGEX_CACHE[regex] = hit
    return hit


def compile_table(rows: RoutingRows, *, cooperate: Callable[[], None] | None = None) -> LcrTable:
    """Build the immutable lookup table; bad regexes are left out and listed in ``problems``
    (the API validates on save, so this only guards against rows written around it).
    ``cooperate`` is called every few hundred routes (the controller passes a gevent yield so a
    cold compile never stalls calls in progress)."""
    problems: list[str] = []
    carriers = {c.id: c for c in rows.carriers}
    gateways_by_carrier: dict[uuid.UUID, list[GatewayRow]] = {}
    for gw in rows.gateways:
        gateways_by_carrier.setdefault(gw.carrier_id, []).append(gw)
    entries_by_route: dict[uuid.UUID, list[CarrierEntryRow]] = {}
    for entry in rows.entries:
        entries_by_route.setdefault(entry.lcr_route_id, []).append(entry)
    routes_by_plan: dict[uuid.UUID, list[RouteRow]] = {}
    for route in rows.routes:
        routes_by_plan.setdefault(route.lcr_id, []).append(route)

    compiled_carriers: dict[uuid.UUID, tuple[str, str, tuple[GatewayTarget, ...], str | None]] = {}

    def carrier_targets(carrier_id: uuid.UUID) -> tuple[str, str, tuple[GatewayTarget, ...], str | None]:
        cached = compiled_carriers.get(carrier_id)
        if cached is not None:
            return cached
        carrier = carriers.get(carrier_id)
        result: tuple[str, str, tuple[GatewayTarget, ...], str | None]
        if carrier is None:
            result = ("?", "", (), "carrier no longer exists")
        else:
            targets = []
            for gw in sorted(gateways_by_carrier.get(carrier_id, ()), key=_gateway_order):
                if not (gw.outbound and gw.is_active):
                    continue
                if int(gw.netmask) != 32:
                    problems.append(f"gateway {gw.id}: outbound gateways need a /32 address")
                    continue
                targets.append(GatewayTarget(gw.id, gateway_name(gw.id), f"{gw.address}:{gw.port}",
                                             carrier.srtp))
            unusable = None
            if not carrier.is_active:
                unusable = "carrier is inactive"
            elif not targets:
                unusable = "carrier has no active outbound gateway"
            result = (carrier.name, dial_prefix(carrier), tuple(targets), unusable)
        compiled_carriers[carrier_id] = result
        return result

    account_plans: dict[uuid.UUID, list[CompiledPlan]] = {}
    platform_plans: list[CompiledPlan] = []
    route_count = 0
    seen = 0
    for plan in sorted(rows.plans, key=lambda p: (p.priority, p.name, str(p.id))):
        if not plan.is_active:
            continue
        compiled_routes: list[CompiledRoute] = []
        for route in routes_by_plan.get(plan.id, ()):
            seen += 1
            if cooperate is not None and seen % 256 == 0:
                cooperate()
            try:
                pattern, regex_prefix = _compiled(route.regex)
            except ValidationFailed as exc:
                problems.append(f"route {route.id} in plan {plan.name!r}: {exc.message}")
                continue
            entries = sorted(
                entries_by_route.get(route.id, ()),
                key=lambda e: (e.priority, -e.workload, e.carrier_id.int),
            )
            compiled_entries = []
            for entry in entries:
                name, tech_prefix, targets, unusable = carrier_targets(entry.carrier_id)
                compiled_entries.append(CompiledCarrier(
                    entry.carrier_id, name, tech_prefix, entry.priority, entry.workload, targets, unusable))
            compiled_routes.append(CompiledRoute(
                route.id, route.regex, pattern, route.priority,
                (route.priority, route.regex, str(route.id)), tuple(compiled_entries), regex_prefix))
        compiled_routes.sort(key=lambda r: r.rank)
        route_count += len(compiled_routes)
        buckets: dict[str, list[CompiledRoute]] = {}
        for compiled_route in compiled_routes:  # already in rank order, so each bucket is too
            buckets.setdefault(compiled_route.prefix, []).append(compiled_route)
        compiled = CompiledPlan(
            plan.id, plan.name, plan.account_id, plan.service_provider_id, tuple(compiled_routes),
            {k: tuple(v) for k, v in buckets.items()}, max((len(k) for k in buckets), default=0),
            frozenset(k[0] for k in buckets if k),
        )
        if plan.account_id is None:
            platform_plans.append(compiled)
        else:
            account_plans.setdefault(plan.account_id, []).append(compiled)
    return LcrTable(
        {k: tuple(v) for k, v in account_plans.items()}, tuple(platform_plans),
        tuple(problems), route_count, {a.id: a.service_provider_id for a in rows.accounts},
    )


def _gateway_order(gw: GatewayRow) -> tuple:
    try:
        ip_key = tuple(int(part) for part in gw.ipv4.split("."))
    except ValueError:
        ip_key = (999,)
    return (ip_key, gw.port, str(gw.id))


__all__ = [
    "Attempt", "CompiledPlan", "Explanation", "LcrTable", "Skipped", "bridge_string",
    "compile_route_regex", "compile_table", "gateway_id_from_name", "gateway_name",
    "literal_prefix", "normalize_number",
]

