"""Preview mode: an agent sees the contact (name, number, attributes) before the call, and
accepts or skips it. Hooked from the dialer loop (app/campaigns/dialer.py), which runs in
``sbc workers``; the agent's answer comes from the agent channel in an API process.

An offer lives in Redis (``<prefix>campaign:preview:<offer id>``, a hash whose ``state`` is
``offered`` → ``accepted`` | ``skipped`` | ``expired``) and in one sorted set of open offers
(offer id → deadline, epoch seconds). Every state change is one Lua script, so exactly one of the
agent's accept, its skip and the timeout wins:

1. **Offer** (the lease holder of a running preview campaign, once a second): free agents of the
   campaign are claimed as for progressive (the same atomic claim, so an agent is never given a
   call and an offer at once), one contact is picked per claimed agent (``in_progress``, attempt
   counted), and ``agent.preview.offer`` goes out in the pick's transaction; the agent channel
   relays it as an ``offer`` of kind ``preview``.
2. **Answer** (the agent channel): ``accept`` or ``skip`` moves ``offered`` to ``accepted`` or
   ``skipped`` and makes the offer due at once.
3. **Settle** (every dialer instance, every round): due offers are taken with ``ZREM`` (one
   taker); one still ``offered`` is past its deadline and becomes ``expired``. Accepted → the
   customer is dialled for that agent (``call.originate``, the progressive path: answered
   customer → the agent's phone). Skipped or expired → the contact is ``pending`` again with
   the attempt given back (no call was placed), behind the contacts never tried; a skip is
   counted (contact ``skips``, campaign ``outcome_counts.skipped``); the agent is released to its
   place in the idle order. An expiry is relayed as ``offer`` ``withdrawn`` (reason ``timeout``).
"""
from __future__ import annotations

import json
import logging
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Callable, Optional

import redis
from sqlalchemy import select, update

from app import limits
from app.calls.originate import OriginateRequest, originate_payload
from app.campaigns import agent_claims, amd, picking
from app.db.engine import tenant_session
from app.events.payloads import emit
from app.models import Campaign, CampaignContact

log = logging.getLogger(__name__)

OFFERED, ACCEPTED, SKIPPED, EXPIRED = "offered", "accepted", "skipped", "expired"
# why an offer went away without a call (agent.preview.withdrawn ``reason``)
WITHDRAWN_TIMEOUT = "timeout"
WITHDRAWN_CAMPAIGN_NOT_RUNNING = "campaign_not_running"
# the agent's answers (the agent channel's commands)
ANSWERS = (ACCEPTED, SKIPPED)

# KEYS: offer hash, open set; ARGV: "<account>:<agent>", new state, offer id
_ANSWER = """
if redis.call('HGET', KEYS[1], 'state') ~= 'offered' then return 0 end
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2])
redis.call('ZADD', KEYS[2], 0, ARGV[3])
return 1
"""
# KEYS: offer hash, open set; ARGV: offer id. The taker of a due offer gets its final state.
_SETTLE = """
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return false end
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'offered' then
  redis.call('HSET', KEYS[1], 'state', 'expired')
  state = 'expired'
end
return state
"""


@dataclass(frozen=True)
class PreviewOffer:
    offer_id: str
    account_id: str
    campaign_id: str
    contact_id: str
    agent_id: str
    queue_id: str
    call_id: str           # the customer's call id if the agent accepts (the agent's claim holds it)
    idle_since: int        # the agent's place in the idle order, given back on skip / timeout
    deadline: float        # epoch seconds

    @property
    def owner(self) -> str:
        return f"{self.account_id}:{self.agent_id}"


class PreviewOffers:
    """The offers in Redis: created by the dialer, answered by the agent channel, settled by
    the dialer."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.redis, self.prefix = client, prefix
        self._answer = client.register_script(_ANSWER)
        self._settle = client.register_script(_SETTLE)

    @property
    def open_key(self) -> str:
        return f"{self.prefix}campaign:preview:open"

    def offer_key(self, offer_id: str) -> str:
        return f"{self.prefix}campaign:preview:{offer_id}"

    def add(self, offer: PreviewOffer) -> None:
        pipe = self.redis.pipeline()
        pipe.hset(self.offer_key(offer.offer_id),
                  mapping={"state": OFFERED, "owner": offer.owner, "offer": json.dumps(asdict(offer))})
        # bounds an offer whose settling process died between taking and deleting it
        pipe.expire(self.offer_key(offer.offer_id), limits.CAMPAIGN_CALL_MARK_TTL_SECONDS)
        pipe.zadd(self.open_key, {offer.offer_id: offer.deadline})
        pipe.execute()

    def discard(self, offer_id: str) -> None:
        pipe = self.redis.pipeline()
        pipe.zrem(self.open_key, offer_id)
        pipe.delete(self.offer_key(offer_id))
        pipe.execute()

    def answer(self, account_id: str, agent_id: str, offer_id: str, choice: str) -> Optional[PreviewOffer]:
        """The agent's ``accepted`` or ``skipped``: the offer, if it was this agent's and still
        open; None otherwise (answered, timed out, or someone else's)."""
        if choice not in ANSWERS:
            raise ValueError(choice)
        if not self._answer(keys=[self.offer_key(offer_id), self.open_key],
                            args=[f"{account_id}:{agent_id}", choice, offer_id]):
            return None
        return self.get(offer_id)

    def get(self, offer_id: str) -> Optional[PreviewOffer]:
        raw = self.redis.hget(self.offer_key(offer_id), "offer")
        return PreviewOffer(**json.loads(raw)) if raw else None

    def due(self, now_epoch: float) -> list[str]:
        members: list[Any] = list(self.redis.zrangebyscore(self.open_key, "-inf", now_epoch))
        return [m.decode() if isinstance(m, bytes) else str(m) for m in members]

    def settle(self, offer_id: str) -> Optional[str]:
        """Take a due offer: its final state, or None when another instance took it."""
        state = self._settle(keys=[self.offer_key(offer_id), self.open_key], args=[offer_id])
        return state.decode() if isinstance(state, bytes) else state

    def open_count(self) -> int:
        return int(self.redis.zcard(self.open_key))


def offer_payload(offer: PreviewOffer, contact: CampaignContact) -> dict[str, Any]:
    """agent.preview.offer (docs/events.md): what the agent decides on."""
    return {"offerId": offer.offer_id, "agentId": offer.agent_id, "campaignId": offer.campaign_id,
            "callId": offer.call_id, "timeoutSeconds": limits.CAMPAIGN_PREVIEW_OFFER_SECONDS,
            "contact": {"id": str(contact.id), "name": contact.name, "phoneNumber": "+" + contact.phone_number,
                        "attributes": contact.attributes or {}, "attempts": contact.attempts}}


def _withdraw(db: Any, offer: PreviewOffer, reason: str) -> None:
    emit("agent.preview.withdrawn", {"offerId": offer.offer_id, "agentId": offer.agent_id,
                                     "campaignId": offer.campaign_id, "reason": reason},
         account_id=offer.account_id, session=db)


def return_contact(db: Any, offer: PreviewOffer, now: datetime, *, skipped: bool) -> None:
    """The offered contact back in the pool: ``pending``, its attempt given back (no call was
    placed), due now — behind the contacts never tried (their ``next_attempt_at`` is null and
    comes first), so a skipped contact is not offered straight back. The caller commits."""
    values: dict[str, Any] = {"status": "pending", "attempts": CampaignContact.attempts - 1, "next_attempt_at": now}
    if skipped:
        values["skips"] = CampaignContact.skips + 1
    db.execute(update(CampaignContact).where(
        CampaignContact.id == uuid.UUID(offer.contact_id), CampaignContact.account_id == uuid.UUID(offer.account_id),
        CampaignContact.status == "in_progress").values(**values))
    if skipped:
        picking.count(db, uuid.UUID(offer.campaign_id), uuid.UUID(offer.account_id), "skipped")


class PreviewDialer:
    """The dialer's preview half. It is handed the dialer's own helpers (free agents, the
    account's headroom, the campaign-call mark, the agent claim's undo) so that a preview call
    is dialled, marked and accounted for exactly as a progressive one."""

    def __init__(self, offers: PreviewOffers, presence: Any, *,
                 free_agents: Callable[[Any, Campaign], list[Any]],
                 headroom: Callable[[Any, Campaign, int], int],
                 mark: Callable[[str, list[Any], float], None],
                 dialled: Callable[..., Any]) -> None:
        self.offers, self.presence = offers, presence
        self.free_agents, self.headroom, self.mark, self.dialled = free_agents, headroom, mark, dialled

    # -- 1. offer ------------------------------------------------------------------------------
    def offer(self, account_id: uuid.UUID, campaign_id: uuid.UUID, now: datetime) -> list[PreviewOffer]:
        """One round of a preview campaign: one contact offered per free agent."""
        account = str(account_id)
        claims: list[agent_claims.Claim] = []
        made: list[PreviewOffer] = []
        try:
            with tenant_session(account_id) as db:
                campaign = picking.running_campaign(db, campaign_id)
                if campaign is None:
                    return []
                free = self.free_agents(db, campaign)
                wanted = self.headroom(db, campaign, len(free))
                claims = agent_claims.claim(self.presence, account, free, wanted)
                picked = picking.pick(db, campaign, now, len(claims))
                rows = {c.id: c for c in db.scalars(select(CampaignContact).where(
                    CampaignContact.id.in_([p.contact_id for p in picked])))} if picked else {}
                deadline = now.timestamp() + limits.CAMPAIGN_PREVIEW_OFFER_SECONDS
                for contact, (agent, call_id, since) in zip(picked, claims):
                    offer = PreviewOffer(offer_id=str(uuid.uuid4()), account_id=account, campaign_id=str(campaign_id),
                                         contact_id=str(contact.contact_id), agent_id=str(agent.agent_id),
                                         queue_id=str(agent.queue_id), call_id=str(call_id), idle_since=since,
                                         deadline=deadline)
                    emit("agent.preview.offer", offer_payload(offer, rows[contact.contact_id]), account_id=account_id,
                         session=db)
                    self.offers.add(offer)
                    made.append(offer)
        except BaseException:
            for offer in made:
                self.offers.discard(offer.offer_id)
            agent_claims.release(self.presence, account, claims)
            raise
        agent_claims.release(self.presence, account, claims[len(made):])
        for offer in made:
            log.info("campaign %s: contact %s offered to agent %s (offer %s)", campaign_id, offer.contact_id,
                     offer.agent_id, offer.offer_id)
        return made

    # -- 3. settle -----------------------------------------------------------------------------
    def settle(self, now: datetime) -> list[Any]:
        """Every due offer: accepted ones dialled, skipped and expired ones returned. Returns
        the dialled calls (the dialer's ``Dialled``)."""
        dialled: list[Any] = []
        for offer_id in self.offers.due(now.timestamp()):
            state = self.offers.settle(offer_id)
            if state is None:
                continue  # another instance took it
            offer = self.offers.get(offer_id)
            if offer is None:
                continue
            try:
                if state == ACCEPTED:
                    call = self._dial(offer, now)
                    if call is not None:
                        dialled.append(call)
                else:
                    self._return(offer, now, skipped=state == SKIPPED,
                                 withdrawn=WITHDRAWN_TIMEOUT if state == EXPIRED else None)
            finally:
                self.offers.discard(offer_id)
        return dialled

    def _return(self, offer: PreviewOffer, now: datetime, *, skipped: bool, withdrawn: Optional[str]) -> None:
        with tenant_session(uuid.UUID(offer.account_id)) as db:
            return_contact(db, offer, now, skipped=skipped)
            if withdrawn:
                _withdraw(db, offer, withdrawn)
        self.presence.unclaim_agent(offer.account_id, offer.agent_id, offer.call_id, offer.idle_since)
        log.info("campaign %s: preview offer %s %s; contact %s back in the pool", offer.campaign_id,
                 offer.offer_id, "skipped" if skipped else "timed out", offer.contact_id)

    def _dial(self, offer: PreviewOffer, now: datetime) -> Optional[Any]:
        """The accepted contact's call, for the agent who accepted it (its claim holds the call
        id). A campaign paused or stopped meanwhile places no new call: the contact returns."""
        account_id = uuid.UUID(offer.account_id)
        with tenant_session(account_id) as db:
            campaign = db.get(Campaign, uuid.UUID(offer.campaign_id))
            number = db.scalar(select(CampaignContact.phone_number).where(
                CampaignContact.id == uuid.UUID(offer.contact_id), CampaignContact.account_id == account_id))
            if campaign is None or campaign.status != "running" or number is None:
                running = False
            else:
                running = True
                request = OriginateRequest(
                    call_id=uuid.UUID(offer.call_id), account_id=account_id, trace_id=uuid.uuid4(),
                    phone_number=number.lstrip("+"), caller_id=(campaign.caller_id or "").lstrip("+") or None,
                    agent_id=uuid.UUID(offer.agent_id), queue_id=uuid.UUID(offer.queue_id),
                    campaign_id=campaign.id, carrier_id=campaign.carrier_id,
                    timeout_seconds=limits.CAMPAIGN_RING_TIMEOUT_SECONDS)
                emit("call.originate", originate_payload(request), account_id=account_id,
                     trace_id=request.trace_id, session=db)
                call = self.dialled(uuid.UUID(offer.campaign_id), uuid.UUID(offer.contact_id),
                                    uuid.UUID(offer.call_id), uuid.UUID(offer.agent_id),
                                    screens=amd.screens(campaign.amd))
                self.mark(offer.account_id, [call], now.timestamp())
        if not running:
            self._return(offer, now, skipped=False, withdrawn=WITHDRAWN_CAMPAIGN_NOT_RUNNING)
            return None
        log.info("campaign %s: preview offer %s accepted; contact %s dialled for agent %s (call %s)",
                 offer.campaign_id, offer.offer_id, offer.contact_id, offer.agent_id, offer.call_id)
        return call
