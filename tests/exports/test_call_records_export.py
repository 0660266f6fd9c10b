"""GET /api/call-records/export: exact columns, merged summary, row cap, formula guard,
compliance log, permissions and tenant isolation — against real PostgreSQL."""
from __future__ import annotations

import csv
import io
import json
import uuid
from pathlib import Path

from sqlalchemy import text

from app import limits
from app.exports.call_records import EXPORT_COLUMNS
from tests.api_management.helpers import admin_client, assert_error
from tests.api_management.records_seed import BASE_TIME, insert_records

EXPECTED_HEADER = ["Time", "Direction", "Caller", "Callee", "Agent", "Queue", "Status", "Journey", "Talk",
                   "Queue Wait", "Hold Count", "Hold Time", "AHT", "Abandoned", "Disposition", "Sentiment",
                   "Recording", "Call ID"]
HOSTILE = json.loads((Path(__file__).parents[1] / "fixtures/api/call_records_export_hostile.json").read_text())


def _csv(response) -> list[list[str]]:
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return list(csv.reader(io.StringIO(response.get_data(as_text=True))))


def _log(owner_engine, account_id) -> list[dict]:
    with owner_engine.connect() as conn:
        rows = conn.execute(text("SELECT * FROM compliance_access_log WHERE account_id = :a ORDER BY occurred_at, action DESC"),
                            {"a": str(account_id)}).mappings().all()
    return [dict(r) for r in rows]


def test_given_records_when_exporting_then_the_header_is_exactly_the_18_spec_columns(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    insert_records(owner_engine, tenant.account_id, 2)
    response = admin.get("/api/call-records/export")
    rows = _csv(response)
    assert rows[0] == EXPECTED_HEADER and list(EXPORT_COLUMNS) == EXPECTED_HEADER
    assert len(rows) == 3 and all(len(r) == 18 for r in rows)
    assert response.mimetype == "text/csv"
    assert response.headers["Content-Disposition"].startswith("attachment;")
    assert response.headers["X-Export-Row-Limit"] == "10000"


def test_given_no_records_when_exporting_then_only_the_header_is_returned(api, seed):
    _, admin = admin_client(api, seed)
    assert _csv(admin.get("/api/call-records/export")) == [EXPECTED_HEADER]


def test_given_a_record_with_summary_agent_and_queue_when_exporting_then_the_row_merges_them(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    seed.user(tenant, "alice", role="agent", agent=True)
    queue_id = seed.queue(tenant, "sales")
    with owner_engine.connect() as conn:
        agent_id = conn.execute(text("SELECT id FROM agents WHERE user_id = :u"),
                                {"u": str(tenant.users["alice"].id)}).scalar()
    insert_records(owner_engine, tenant.account_id, 1, with_summary=True, agent_id=agent_id, queue_id=queue_id,
                   journey="ivr > queue:sales > agent:alice", sentiment_label="positive",
                   has_recording=True, recording_url="https://rec.example/r1.mp3")
    header, row = _csv(admin.get("/api/call-records/export"))
    cell = dict(zip(header, row))
    assert cell["Time"] == "2026-03-01T12:00:00Z"
    assert cell["Direction"] == "inbound" and cell["Caller"] == "15550000000" and cell["Callee"] == "18005550000"
    assert cell["Agent"] == "alice" and cell["Queue"] == "sales" and cell["Status"] == "completed"
    assert cell["Journey"] == "ivr > queue:sales > agent:alice"
    assert (cell["Talk"], cell["Queue Wait"], cell["Hold Count"], cell["Hold Time"], cell["AHT"]) == \
        ("60", "12", "2", "7", "95")
    assert cell["Abandoned"] == "no" and cell["Disposition"] == "resolved" and cell["Sentiment"] == "positive"
    assert cell["Recording"] == "https://rec.example/r1.mp3"
    uuid.UUID(cell["Call ID"])


def test_given_a_record_without_summary_when_exporting_then_summary_cells_are_empty_and_talk_is_the_records(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    insert_records(owner_engine, tenant.account_id, 1)
    header, row = _csv(admin.get("/api/call-records/export"))
    cell = dict(zip(header, row))
    assert cell["Talk"] == "61"
    assert all(cell[name] == "" for name in ("Queue Wait", "Hold Count", "Hold Time", "AHT", "Abandoned",
                                              "Disposition", "Agent", "Queue", "Recording"))


def test_given_10001_records_when_exporting_then_exactly_10000_rows_newest_first(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    insert_records(owner_engine, tenant.account_id, limits.CSV_EXPORT_MAX_ROWS + 1, with_summary=True)
    rows = _csv(admin.get("/api/call-records/export"))
    assert len(rows) - 1 == limits.CSV_EXPORT_MAX_ROWS == 10_000
    times = [r[0] for r in rows[1:]]
    assert times == sorted(times, reverse=True)
    assert times[0] == "2026-03-01T12:00:00Z"  # the oldest (10,001st) record is the one left out
    completed = [e for e in _log(owner_engine, tenant.account_id) if e["action"] == "call_records.export"]
    assert completed[-1]["row_count"] == 10_000


def test_given_formula_like_values_when_exporting_then_cells_are_neutralised(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    insert_records(owner_engine, tenant.account_id, 1, with_summary=True)
    with owner_engine.begin() as conn:
        conn.execute(text("UPDATE call_records SET from_number = :f, to_number = :t, journey = :j, sentiment_label = :s "
                          "WHERE account_id = :a"),
                     {"f": HOSTILE["from_number"], "t": HOSTILE["to_number"], "j": HOSTILE["journey"],
                      "s": HOSTILE["sentiment_label"], "a": str(tenant.account_id)})
        conn.execute(text("UPDATE interaction_summary SET disposition = :d WHERE account_id = :a"),
                     {"d": HOSTILE["disposition"], "a": str(tenant.account_id)})
    header, row = _csv(admin.get("/api/call-records/export"))
    cell = dict(zip(header, row))
    for column, expected in HOSTILE["expected"].items():
        assert cell[column] == expected
    for value in row:
        assert not value.startswith(("=", "+", "-", "@", "\t", "\r")) or value == HOSTILE["to_number"]


def test_given_an_export_when_it_completes_then_the_compliance_log_holds_who_when_filters_and_count(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    insert_records(owner_engine, tenant.account_id, 5, direction="outbound")
    insert_records(owner_engine, tenant.account_id, 2, direction="inbound")
    rows = _csv(admin.get("/api/call-records/export?direction=outbound&from=2026-01-01T00:00:00Z"))
    assert len(rows) == 6
    started, completed = _log(owner_engine, tenant.account_id)
    assert started["action"] == "call_records.export.started" and started["row_count"] is None
    assert completed["action"] == "call_records.export" and completed["row_count"] == 5
    for entry in (started, completed):
        assert entry["user_id"] == tenant.admin.id
        assert entry["filters"] == {"direction": "outbound", "from": "2026-01-01T00:00:00+00:00"}
    assert completed["occurred_at"] >= started["occurred_at"]


def test_given_a_client_that_disconnects_mid_stream_when_exporting_then_an_incomplete_entry_is_logged(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    insert_records(owner_engine, tenant.account_id, 3000)
    response = admin.get("/api/call-records/export", buffered=False)
    first = next(iter(response.response))
    assert first.startswith(b"Time,Direction") if isinstance(first, bytes) else first.startswith("Time,Direction")
    response.close()
    actions = [(e["action"], e["row_count"]) for e in _log(owner_engine, tenant.account_id)]
    assert actions[0] == ("call_records.export.started", None)
    assert actions[1][0] == "call_records.export.incomplete" and 0 < actions[1][1] < 3000


def test_given_no_recordings_view_permission_when_exporting_then_403_and_nothing_is_logged(api, seed, owner_engine):
    tenant = seed.tenant()
    insert_records(owner_engine, tenant.account_id, 1)
    seed.user(tenant, "plain", role="supervisor")
    assert_error(api.login(tenant, "plain").get("/api/call-records/export"), 403, "permission_denied")
    assert _log(owner_engine, tenant.account_id) == []
    seed.user(tenant, "viewer", role="agent", permissions=["recordings.view"])
    assert len(_csv(api.login(tenant, "viewer").get("/api/call-records/export"))) == 2


def test_given_two_tenants_when_b_exports_then_none_of_as_rows_are_included(api, seed, owner_engine):
    tenant_a, admin_a = admin_client(api, seed)
    tenant_b, admin_b = admin_client(api, seed)
    insert_records(owner_engine, tenant_a.account_id, 4)
    insert_records(owner_engine, tenant_b.account_id, 1, direction="outbound")
    a_calls = {r[-1] for r in _csv(admin_a.get("/api/call-records/export"))[1:]}
    b_rows = _csv(admin_b.get("/api/call-records/export"))[1:]
    assert len(b_rows) == 1 and b_rows[0][1] == "outbound" and not (a_calls & {r[-1] for r in b_rows})
    assert all(e["action"].startswith("call_records.export") for e in _log(owner_engine, tenant_b.account_id))
    assert len(_log(owner_engine, tenant_a.account_id)) == 2  # A's log holds only A's export


def test_given_an_invalid_filter_when_exporting_then_422_and_nothing_is_logged(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    assert_error(admin.get("/api/call-records/export?status=exploded"), 422, "validation_failed")
    assert _log(owner_engine, tenant.account_id) == []


def test_given_the_same_filters_when_listing_and_exporting_then_both_select_the_same_calls(api, seed, owner_engine):
    from datetime import timedelta

    from tests.api_management.records_seed import BASE_TIME

    tenant, admin = admin_client(api, seed)
    agent, queue = uuid.uuid4(), uuid.uuid4()
    insert_records(owner_engine, tenant.account_id, 6, agent_id=agent, queue_id=queue, status="completed")
    insert_records(owner_engine, tenant.account_id, 3, agent_id=agent, status="no-answer",
                   start=BASE_TIME - timedelta(days=2))
    insert_records(owner_engine, tenant.account_id, 4, direction="outbound")
    for query in (f"agent_id={agent}", f"queue_id={queue}", "status=no-answer", "direction=outbound",
                  "to=2026-02-28T00:00:00Z", f"agent_id={agent}&from=2026-02-28T00:00:00Z",
                  "number=15550000002", "number=%2B1800555000"):
        listed = admin.get(f"/api/call-records?limit=200&{query}").get_json()["items"]
        exported = _csv(admin.get(f"/api/call-records/export?{query}"))[1:]
        assert sorted(r["call_id"] for r in listed) == sorted(row[-1] for row in exported), query
        assert exported, query


INDICATOR_HEADER = ["IVR", "Connect Latency", "ACW", "Transfers", "Short Abandon", "Campaign ID", "Contact ID",
                    "AMD Result"]


def test_given_indicators_true_when_exporting_then_the_18_columns_are_followed_by_the_indicator_columns(api, seed, owner_engine):
    tenant, admin = admin_client(api, seed)
    insert_records(owner_engine, tenant.account_id, 1, with_summary=True)
    insert_records(owner_engine, tenant.account_id, 1, start=BASE_TIME.replace(hour=11))  # no summary
    with owner_engine.begin() as conn:
        conn.execute(text("UPDATE interaction_summary SET ivr_ms = 8400, connect_latency_ms = 3600, acw_ms = 25600, "
                          "transfer_count = 1, abandoned = true, short_abandon = true WHERE account_id = :a"),
                     {"a": str(tenant.account_id)})
        campaign, contact = uuid.uuid4(), uuid.uuid4()  # the record with a summary: a campaign's call
        conn.execute(text("UPDATE call_records SET campaign_id = :c, contact_id = :k, amd_result = 'notsure' "
                          "WHERE account_id = :a "
                          "AND trace_id IN (SELECT trace_id FROM interaction_summary WHERE account_id = :a)"),
                     {"a": str(tenant.account_id), "c": str(campaign), "k": str(contact)})
    header, with_summary, without = _csv(admin.get("/api/call-records/export?indicators=true"))
    assert header == EXPECTED_HEADER + INDICATOR_HEADER
    cell = dict(zip(header, with_summary))
    assert (cell["IVR"], cell["Connect Latency"], cell["ACW"], cell["Transfers"], cell["Short Abandon"]) == \
        ("8", "4", "26", "1", "yes")
    assert cell["Abandoned"] == "yes" and cell["Call ID"] == with_summary[17]  # the 18 keep their places
    assert (cell["Campaign ID"], cell["Contact ID"], cell["AMD Result"]) == (str(campaign), str(contact), "notsure")
    assert without[18:] == ["", "", "", "", "", "", "", ""]
    started = [e for e in _log(owner_engine, tenant.account_id) if e["action"] == "call_records.export.started"]
    assert started[-1]["filters"] == {"indicators": "true"}
    assert _csv(admin.get("/api/call-records/export?indicators=false"))[0] == EXPECTED_HEADER


def test_given_a_bad_indicators_value_when_exporting_then_422(api, seed):
    _, admin = admin_client(api, seed)
    assert admin.get("/api/call-records/export?indicators=maybe").status_code == 422
