"""Which campaign contact a call dialled (app/campaigns/dispositions.py), on real PostgreSQL
and Redis: the dialer's mark while the call is live, the stamped call record after; never
another account's."""
from __future__ import annotations

import uuid

from sqlalchemy import text

from app.campaigns.dialer import Dialled
from app.campaigns.dispositions import DialledContact, contact_of_call
from app.db.engine import tenant_session
from tests.campaigns.test_dialer import NOON_NEW_YORK, NUMBERS, make_floor


def test_given_a_live_campaign_call_then_the_dialers_mark_names_its_contact_for_its_own_account_only(
        seed, owner_engine, redis_client):
    floor = make_floor(seed, owner_engine, redis_client, agents=1)
    other = seed.tenant().account_id
    call_id, contact_id = uuid.uuid4(), floor.contacts[NUMBERS[0]]
    dialer = floor.dialer()
    dialer.mark(str(floor.account_id), [Dialled(floor.campaign_id, contact_id, call_id, floor.agents[0].id)],
                NOON_NEW_YORK.timestamp())

    with tenant_session(floor.account_id) as db:
        assert contact_of_call(db, redis_client, floor.presence.prefix, floor.account_id, call_id) == \
            DialledContact(floor.campaign_id, contact_id)
        assert contact_of_call(db, redis_client, floor.presence.prefix, floor.account_id, uuid.uuid4()) is None
    with tenant_session(other) as db:
        assert contact_of_call(db, redis_client, floor.presence.prefix, other, call_id) is None


def test_given_an_ended_campaign_call_then_its_stamped_record_names_its_contact(seed, owner_engine, redis_client):
    floor = make_floor(seed, owner_engine, redis_client, agents=1)
    call_id, contact_id = uuid.uuid4(), floor.contacts[NUMBERS[1]]
    with owner_engine.begin() as conn:  # as app/campaigns/picking.record_outcome leaves it
        conn.execute(text(
            "INSERT INTO call_records (account_id, trace_id, call_id, direction, started_at, status, campaign_id,"
            " contact_id) VALUES (:a, :t, :i, 'outbound', :at, 'completed', :k, :c)"),
            {"a": floor.account_id, "t": uuid.uuid4(), "i": call_id, "at": NOON_NEW_YORK,
             "k": floor.campaign_id, "c": contact_id})

    with tenant_session(floor.account_id) as db:
        assert contact_of_call(db, redis_client, floor.presence.prefix, floor.account_id, call_id) == \
            DialledContact(floor.campaign_id, contact_id)
