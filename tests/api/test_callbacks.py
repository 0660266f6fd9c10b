"""/api/queues/:queueId/callbacks: license queue-mgmt, queue ownership, dispatch order, cancel."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import limits
from app.models.contact_center import Callback
from tests.api.fixtures import cases


def _path(queue_id, callback_id=None) -> str:
    base = f"/api/queues/{queue_id}/callbacks"
    return f"{base}/{callback_id}" if callback_id else base


def _status(owner_engine, callback_id) -> str:
    with Session(owner_engine) as db:
        return db.scalar(select(Callback.status).where(Callback.id == uuid.UUID(callback_id)))


@pytest.mark.parametrize("case", cases("callbacks_create_good.json"))
def test_given_a_valid_body_when_creating_a_callback_then_201_pending_with_zero_attempts(api, seed, case):
    acme = seed.tenant()
    queue_id = seed.queue(acme)
    agent = api.login(acme)
    response = agent.post(_path(queue_id), json=case["body"])
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    for name, value in case["expect"].items():
        assert body[name] == value, name
    assert body["queue_id"] == str(queue_id) and body["status"] == "pending"
    assert body["attempts"] == 0 and body["max_attempts"] == limits.CALLBACK_MAX_ATTEMPTS
    assert body["created_by"] == str(acme.admin.id)
    fetched = agent.get(_path(queue_id, body["id"]))
    assert fetched.status_code == 200 and fetched.get_json() == body


@pytest.mark.parametrize("case", cases("callbacks_create_bad.json"))
def test_given_an_invalid_body_when_creating_a_callback_then_422_names_the_field(api, seed, case):
    acme = seed.tenant()
    queue_id = seed.queue(acme)
    client = api.login(acme)
    response = client.post(_path(queue_id), json=case["body"])
    assert response.status_code == 422
    assert response.get_json()["code"] == "validation_failed"
    assert case["field"] in response.get_json()["details"]["json"]
    assert client.get(_path(queue_id)).get_json() == []


def test_given_callbacks_of_mixed_priority_when_listing_then_dispatch_order_and_status_filter(api, seed, owner_engine):
    acme = seed.tenant()
    queue_id = seed.queue(acme)
    client = api.login(acme)
    made = {}
    for label, priority, at in [
        ("low-early", 0, "2026-01-01T08:00:00Z"),
        ("high-late", 5, "2026-01-01T10:00:00Z"),
        ("high-early", 5, "2026-01-01T09:00:00Z"),
        ("low-late", 0, "2026-01-01T11:00:00Z"),
    ]:
        made[label] = client.post(_path(queue_id), json={
            "phone_number": "1555000" + str(len(made)), "priority": priority, "requested_at": at,
        }).get_json()["id"]
    listed = [c["id"] for c in client.get(_path(queue_id)).get_json()]
    assert listed == [made["high-early"], made["high-late"], made["low-early"], made["low-late"]]
    seed.set_callback_status(made["high-early"], "dialing")
    pending = client.get(_path(queue_id), query_string={"status": "pending"}).get_json()
    assert [c["id"] for c in pending] == [made["high-late"], made["low-early"], made["low-late"]]
    page = client.get(_path(queue_id), query_string={"limit": 2, "offset": 1}).get_json()
    assert [c["id"] for c in page] == [made["high-late"], made["low-early"]]


@pytest.mark.parametrize("query", [{"status": "bogus"}, {"limit": 0}, {"limit": 501}, {"offset": -1}])
def test_given_a_bad_list_query_when_listing_callbacks_then_422(api, seed, query):
    acme = seed.tenant()
    response = api.login(acme).get(_path(seed.queue(acme)), query_string=query)
    assert response.status_code == 422 and list(query)[0] in response.get_json()["details"]["query"]


def test_given_a_pending_callback_when_deleting_then_it_is_cancelled_and_kept(api, seed, owner_engine):
    acme = seed.tenant()
    queue_id = seed.queue(acme)
    client = api.login(acme)
    cb = client.post(_path(queue_id), json={"phone_number": "15550001"}).get_json()["id"]
    assert client.delete(_path(queue_id, cb)).status_code == 204
    assert _status(owner_engine, cb) == "cancelled"
    assert client.get(_path(queue_id, cb)).get_json()["status"] == "cancelled"
    assert client.delete(_path(queue_id, cb)).status_code == 204  # idempotent


@pytest.mark.parametrize(("status", "code"), [("dialing", "callback_in_progress"),
                                              ("completed", "callback_finished"),
                                              ("failed", "callback_finished")])
def test_given_a_callback_not_pending_when_deleting_then_409_and_status_unchanged(api, seed, owner_engine, status, code):
    acme = seed.tenant()
    queue_id = seed.queue(acme)
    client = api.login(acme)
    cb = client.post(_path(queue_id), json={"phone_number": "15550001"}).get_json()["id"]
    seed.set_callback_status(cb, status)
    response = client.delete(_path(queue_id, cb))
    assert response.status_code == 409 and response.get_json()["code"] == code
    assert _status(owner_engine, cb) == status


def test_given_a_pending_callback_when_rescheduling_then_its_time_and_priority_change_and_null_clears_the_time(api, seed):
    acme = seed.tenant()
    queue_id = seed.queue(acme)
    client = api.login(acme)
    cb = client.post(_path(queue_id), json={"phone_number": "15550001"}).get_json()
    assert cb["scheduled_at"] is None
    response = client.patch(_path(queue_id, cb["id"]),
                            json={"scheduled_at": "2030-01-02T10:00:00+02:00", "priority": 7})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["scheduled_at"] == "2030-01-02T08:00:00+00:00" and body["priority"] == 7
    assert body["requested_at"] == cb["requested_at"] and body["status"] == "pending"
    cleared = client.patch(_path(queue_id, cb["id"]), json={"scheduled_at": None}).get_json()
    assert cleared["scheduled_at"] is None and cleared["priority"] == 7


@pytest.mark.parametrize("body", [{}, {"scheduled_at": "tomorrow"}, {"priority": 1001}])
def test_given_a_bad_reschedule_body_then_422_and_nothing_changes(api, seed, body):
    acme = seed.tenant()
    queue_id = seed.queue(acme)
    client = api.login(acme)
    cb = client.post(_path(queue_id), json={"phone_number": "15550001"}).get_json()
    response = client.patch(_path(queue_id, cb["id"]), json=body)
    assert response.status_code == 422 and response.get_json()["code"] == "validation_failed"
    assert client.get(_path(queue_id, cb["id"])).get_json() == cb


@pytest.mark.parametrize(("status", "code"), [("dialing", "callback_in_progress"),
                                              ("completed", "callback_finished"),
                                              ("cancelled", "callback_cancelled")])
def test_given_a_callback_not_pending_when_rescheduling_then_409_and_unchanged(api, seed, owner_engine, status, code):
    acme = seed.tenant()
    queue_id = seed.queue(acme)
    client = api.login(acme)
    cb = client.post(_path(queue_id), json={"phone_number": "15550001"}).get_json()["id"]
    seed.set_callback_status(cb, status)
    response = client.patch(_path(queue_id, cb), json={"scheduled_at": "2030-01-01T00:00:00Z"})
    assert response.status_code == 409 and response.get_json()["code"] == code
    assert client.get(_path(queue_id, cb)).get_json()["scheduled_at"] is None


def test_given_an_agent_when_rescheduling_then_403_supervisor_required(api, seed):
    acme = seed.tenant()
    seed.user(acme, "alice", role="agent", agent=True)
    queue_id = seed.queue(acme)
    cb = api.login(acme).post(_path(queue_id), json={"phone_number": "15550001"}).get_json()["id"]
    response = api.login(acme, "alice").patch(_path(queue_id, cb), json={"priority": 3})
    assert response.status_code == 403 and response.get_json()["code"] == "supervisor_required"


def test_given_a_queue_when_deleting_the_collection_then_only_pending_callbacks_are_cancelled(api, seed, owner_engine):
    acme = seed.tenant()
    queue_id, other_queue = seed.queue(acme), seed.queue(acme)
    client = api.login(acme)
    ids = [client.post(_path(queue_id), json={"phone_number": f"1555000{i}"}).get_json()["id"] for i in range(3)]
    untouched = client.post(_path(other_queue), json={"phone_number": "15559999"}).get_json()["id"]
    seed.set_callback_status(ids[0], "dialing")
    response = client.delete(_path(queue_id))
    assert response.status_code == 200 and response.get_json() == {"cancelled": 2}
    assert [_status(owner_engine, i) for i in ids] == ["dialing", "cancelled", "cancelled"]
    assert _status(owner_engine, untouched) == "pending"


def test_given_a_callback_of_another_queue_when_addressed_through_this_queue_then_404(api, seed):
    acme = seed.tenant()
    q1, q2 = seed.queue(acme), seed.queue(acme)
    client = api.login(acme)
    cb = client.post(_path(q1), json={"phone_number": "15550001"}).get_json()["id"]
    for response in (client.get(_path(q2, cb)), client.delete(_path(q2, cb))):
        assert response.status_code == 404 and response.get_json()["code"] == "callback_not_found"


def test_given_an_unknown_queue_when_using_callbacks_then_404_queue_not_found(api, seed):
    client = api.login(seed.tenant())
    missing = uuid.uuid4()
    for response in (client.get(_path(missing)), client.post(_path(missing), json={"phone_number": "1555"}),
                     client.delete(_path(missing))):
        assert response.status_code == 404 and response.get_json()["code"] == "queue_not_found"


# --- licenses and tenants ---------------------------------------------------------------------

@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_given_an_account_without_queue_mgmt_when_using_callbacks_then_403_license_required(api, seed, method):
    acme = seed.tenant(licenses=["api-access"])
    queue_id = seed.queue(acme)
    response = api.login(acme).request(method, _path(queue_id),
                                       json={"phone_number": "1555"} if method == "POST" else None)
    assert response.status_code == 403 and response.get_json()["code"] == "license_required"
    assert response.get_json()["details"] == {"license": "queue-mgmt"}


def test_given_an_agent_session_with_the_license_when_requesting_a_callback_then_403_admin_required(api, seed):
    """The license is not enough: a callback makes the platform dial the number at the account's
    cost (issue 28; every role × method: test_callbacks_access.py)."""
    acme = seed.tenant()
    seed.user(acme, "alice", role="agent", agent=True)
    queue_id = seed.queue(acme)
    response = api.login(acme, "alice").post(_path(queue_id), json={"phone_number": "1555"})
    assert response.status_code == 403 and response.get_json()["code"] == "admin_required"
    assert api.login(acme).get(_path(queue_id)).get_json() == []


def test_given_tenant_b_when_touching_tenant_a_queue_or_callbacks_then_404_and_nothing_changes(api, seed, owner_engine):
    acme, globex = seed.tenant(), seed.tenant()
    a_queue = seed.queue(acme)
    a_client, b_client = api.login(acme), api.login(globex)
    cb = a_client.post(_path(a_queue), json={"phone_number": "15550001"}).get_json()["id"]
    attempts = [
        b_client.get(_path(a_queue)),
        b_client.post(_path(a_queue), json={"phone_number": "15550002"}),
        b_client.get(_path(a_queue, cb)),
        b_client.delete(_path(a_queue, cb)),
        b_client.delete(_path(a_queue)),
    ]
    for response in attempts:
        assert response.status_code == 404 and response.get_json()["code"] == "queue_not_found"
    assert _status(owner_engine, cb) == "pending"
    assert [c["id"] for c in a_client.get(_path(a_queue)).get_json()] == [cb]
    # even a callback id of A under B's own queue path is invisible
    b_queue = seed.queue(globex)
    response = b_client.delete(_path(b_queue, cb))
    assert response.status_code == 404 and response.get_json()["code"] == "callback_not_found"
    assert _status(owner_engine, cb) == "pending"
