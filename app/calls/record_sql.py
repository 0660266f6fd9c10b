"""The SQL of a finished leg's write (app/calls/records.py): one script, sent in one execute.

Why plain SQL sent as one script: the hang-up write was eight to ten round trips (BEGIN, the
tenant setting, the record, the agent's window, the summary, the outbox row, the account's
service provider, one per meter row, COMMIT), each execute costing the controller ~0.5 ms of
Python and SQLAlchemy work: ~18% of its CPU on a real switch. As one script it is one round
trip and ~1.6 ms of CPU instead of ~4-5 ms (500 writes against the local PostgreSQL).
PostgreSQL runs the statements of one script in order; ``app.db.engine.run_as_tenant`` runs it
as one implicit transaction, ``write_in`` inside the caller's.

Each statement after the record's insert writes only if *this* transaction inserted the record
(``_OURS``: the row of this leg carries the public id we generated; a leg recorded before keeps
its own), so a repeated hang-up writes nothing else, as before. Statements, not one statement
of data-modifying CTEs, because order matters: the summary reads the agent's after-call work
with a fresh snapshot after the agent's window is closed (a wrap-up committing meanwhile is
counted), and the meters go last, as their row lock is where every call of the account waits.

Parameters are psycopg2's ``%(name)s``; ids and JSON are sent as text and PostgreSQL casts them
to the column's type.
"""
from __future__ import annotations

_OURS = "EXISTS (SELECT FROM call_records WHERE call_id = %(call_id)s AND public_id = %(public_id)s)"

RECORD_COLUMNS = (
    "public_id", "account_id", "trace_id", "call_id", "other_leg_call_id", "direction",
    "from_number", "to_number", "sip_call_id", "application_id", "carrier_id", "gateway_id",
    "dial_carrier_id", "dial_gateway_id", "source_ip", "started_at", "answered_at", "ended_at",
    "ring_ms", "talk_ms", "duration_ms", "status", "hangup_cause", "hangup_cause_q850",
    "hangup_disposition", "hangup_reason", "agent_id", "queue_id", "has_recording",
    "has_transcript", "has_webhook", "has_flow", "recording_url", "webhook_error", "tags", "journey",
)

# once per leg: a replayed CHANNEL_HANGUP_COMPLETE finds call_id taken and writes nothing
_INSERT_RECORD = (
    f"INSERT INTO call_records ({', '.join(RECORD_COLUMNS)}) "
    f"VALUES ({', '.join(f'%({c})s' for c in RECORD_COLUMNS)}) "
    "ON CONFLICT (call_id) DO NOTHING")

# The current agent's window on this leg: its talk and hold (the whole leg's, unless a blind
# transfer closed an earlier agent's window: app/voice/transfer.py). Inserted when opening it
# failed; after-call work already measured is kept.
_CLOSE_SEGMENT = f"""
INSERT INTO interaction_segment (id, account_id, trace_id, call_id, agent_id, started_at, ended_at,
                                 talk_ms, hold_ms, acw_ms, handle_ms, transferred, conferenced)
SELECT %(seg_id)s, %(account_id)s, %(trace_id)s, %(call_id)s, %(agent_id)s, %(seg_started_at)s,
       %(ended_at)s, %(seg_talk_ms)s, %(seg_hold_ms)s, 0, %(seg_talk_ms)s + %(seg_hold_ms)s, false, false
WHERE {_OURS}
ON CONFLICT (id) DO UPDATE SET
    ended_at = excluded.ended_at, talk_ms = excluded.talk_ms, hold_ms = excluded.hold_ms,
    handle_ms = excluded.talk_ms + excluded.hold_ms + interaction_segment.acw_ms
WHERE interaction_segment.account_id = excluded.account_id"""

# One row per conversation: a second leg of the same trace adds its talk/hold/transfers and
# keeps the longest IVR and queue wait. After-call work is the sum of the trace's agent windows,
# whether the wrap-up ended before or after this write.
_UPSERT_SUMMARY = f"""
INSERT INTO interaction_summary (id, account_id, trace_id, ivr_ms, queue_wait_ms, connect_latency_ms,
                                 talk_ms, hold_count, hold_ms, acw_ms, aht_ms, transfer_count,
                                 abandoned, short_abandon, disposition)
SELECT %(s_id)s, %(account_id)s, %(trace_id)s, %(s_ivr_ms)s, %(s_queue_wait_ms)s,
       %(s_connect_latency_ms)s, %(s_talk_ms)s, %(s_hold_count)s, %(s_hold_ms)s, acw.ms,
       %(s_talk_ms)s + %(s_hold_ms)s + acw.ms, %(s_transfer_count)s, %(s_abandoned)s,
       %(s_short_abandon)s, %(s_disposition)s
FROM (SELECT coalesce(sum(acw_ms), 0) + %(s_acw_ms)s AS ms
      FROM interaction_segment WHERE trace_id = %(trace_id)s) AS acw
WHERE {_OURS}
ON CONFLICT (trace_id) DO UPDATE SET
    ivr_ms = greatest(interaction_summary.ivr_ms, excluded.ivr_ms),
    queue_wait_ms = greatest(interaction_summary.queue_wait_ms, excluded.queue_wait_ms),
    connect_latency_ms = coalesce(excluded.connect_latency_ms, interaction_summary.connect_latency_ms),
    talk_ms = interaction_summary.talk_ms + excluded.talk_ms,
    hold_count = interaction_summary.hold_count + excluded.hold_count,
    hold_ms = interaction_summary.hold_ms + excluded.hold_ms,
    acw_ms = greatest(interaction_summary.acw_ms, excluded.acw_ms),
    aht_ms = interaction_summary.talk_ms + excluded.talk_ms + interaction_summary.hold_ms
             + excluded.hold_ms + greatest(interaction_summary.acw_ms, excluded.acw_ms),
    transfer_count = interaction_summary.transfer_count + excluded.transfer_count,
    abandoned = excluded.abandoned,
    short_abandon = excluded.short_abandon,
    disposition = coalesce(excluded.disposition, interaction_summary.disposition),
    updated_at = now()"""

# call.ended, published by the relay once this transaction commits (app/events/outbox.py)
_INSERT_EVENT = f"""
INSERT INTO event_outbox (id, exchange, routing_key, body, created_at, attempts)
SELECT %(ev_id)s, %(ev_exchange)s, %(ev_routing_key)s, %(ev_body)s, %(ev_created_at)s, %(ev_attempts)s
WHERE {_OURS}"""

# The leg's meters (app/calls/usage.py): a call, and its started minutes of talk when there are
# any. The service provider is the account's unless the session knew it; an account without one
# is not metered.
_ADD_USAGE = f"""
INSERT INTO usage_meters (id, account_id, service_provider_id, product, period, quantity)
SELECT m.id, %(account_id)s, sp.id, m.product, %(m_period)s, m.quantity
FROM (VALUES (%(m_calls_id)s::uuid, %(m_calls_product)s, %(m_calls)s),
             (%(m_minutes_id)s::uuid, %(m_minutes_product)s, %(m_minutes)s))
         AS m (id, product, quantity),
     (SELECT coalesce(%(m_service_provider_id)s::uuid,
                      (SELECT service_provider_id FROM accounts WHERE id = %(account_id)s)) AS id) AS sp
WHERE m.quantity > 0 AND sp.id IS NOT NULL AND {_OURS}
ON CONFLICT (account_id, product, period) DO UPDATE SET
    quantity = usage_meters.quantity + excluded.quantity, updated_at = now()"""

# the script's result: did this transaction record the leg?
_RECORDED = f"SELECT {_OURS}"


def _script(*statements: str) -> str:
    return ";\n".join(s.strip() for s in statements)


# The two scripts, built once: a leg an agent answered closes the agent's window too.
WRITE_LEG = _script(_INSERT_RECORD, _UPSERT_SUMMARY, _INSERT_EVENT, _ADD_USAGE, _RECORDED)
WRITE_AGENT_LEG = _script(_INSERT_RECORD, _CLOSE_SEGMENT, _UPSERT_SUMMARY, _INSERT_EVENT,
                          _ADD_USAGE, _RECORDED)
