"""GET /api/call-records/:id carries the agents' ownership windows of its conversation
(interaction_segment), oldest first, each with its agent's name; another tenant's windows never
appear."""
from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import text

from tests.api_management.helpers import admin_client
from tests.api_management.records_seed import BASE_TIME, insert_records


def _segment(owner_engine, account_id, trace_id, agent_id, started_at, **values):
    with owner_engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO interaction_segment (id, account_id, trace_id, agent_id, call_id, started_at, ended_at, "
            "talk_ms, hold_ms, acw_ms, handle_ms) VALUES (gen_random_uuid(), :a, :t, :g, gen_random_uuid(), :s, "
            ":e, :talk, :hold, :acw, :talk + :hold + :acw)"),
            {"a": str(account_id), "t": str(trace_id), "g": str(agent_id), "s": started_at,
             "e": started_at + timedelta(seconds=60), "talk": values.get("talk", 50000),
             "hold": values.get("hold", 5000), "acw": values.get("acw", 10000)})


def test_given_a_record_whose_conversation_had_agents_then_the_detail_lists_their_windows(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    other, _ = admin_client(api, seed)
    seed.user(tenant, "anna", agent=True)
    insert_records(owner_engine, tenant.account_id, 1, with_summary=True)
    with owner_engine.connect() as conn:
        public_id, trace_id = conn.execute(text("SELECT public_id, trace_id FROM call_records WHERE account_id = :a"),
                                           {"a": str(tenant.account_id)}).one()
        first = conn.execute(text("SELECT a.id FROM agents a JOIN users u ON u.id = a.user_id "
                                  "WHERE u.username = 'anna' AND a.account_id = :t"),
                             {"t": tenant.account_id}).scalar_one()
    second = uuid.uuid4()  # an agent deleted since
    _segment(owner_engine, tenant.account_id, trace_id, second, BASE_TIME + timedelta(seconds=90), acw=0)
    _segment(owner_engine, tenant.account_id, trace_id, first, BASE_TIME + timedelta(seconds=10))
    _segment(owner_engine, other.account_id, trace_id, uuid.uuid4(), BASE_TIME)  # another tenant's row
    detail = admin.get(f"/api/call-records/{public_id}").get_json()
    windows = detail["segments"]
    assert [(w["agent_id"], w["agent_name"]) for w in windows] == [(str(first), "anna"), (str(second), None)]
    assert (windows[0]["talk_ms"], windows[0]["hold_ms"], windows[0]["acw_ms"], windows[0]["handle_ms"]) == \
        (50000, 5000, 10000, 65000)
    assert windows[0]["transferred"] is False and windows[0]["ended_at"] is not None


def test_given_a_record_without_agents_then_segments_is_empty(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    insert_records(owner_engine, tenant.account_id, 1)
    with owner_engine.connect() as conn:
        public_id = conn.execute(text("SELECT public_id FROM call_records WHERE account_id = :a"),
                                 {"a": str(tenant.account_id)}).scalar_one()
    assert admin.get(f"/api/call-records/{public_id}").get_json()["segments"] == []
