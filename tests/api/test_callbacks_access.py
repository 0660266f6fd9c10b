"""Who may read and change a queue's callbacks (issue 28, item 2; app/api/callbacks/access.py).

The license used to be the only check: an agent session (or an agent's API key) listed any
queue's customers, created callbacks to any number (the platform dials them at the account's
cost) and cancelled them all. Each role × method below, for sessions and API keys: creating
needs an admin session (``admin_required``); rescheduling and cancelling an admin or a
supervisor (``supervisor_required``: they run the queues' day, issue 22); reads an admin or
supervisor, or an agent of the queue (``not_a_queue_member`` for the others, unknown queue
included)."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.api.api_keys.service import generate_key, hash_key
from app.models import Agent, AgentQueue
from app.models.contact_center import Callback
from app.models.users import ApiKey

OK, ADMIN_REQUIRED, NOT_MEMBER = "ok", "admin_required", "not_a_queue_member"
SUPERVISOR_REQUIRED = "supervisor_required"
METHODS = ("list", "get", "create", "cancel", "cancel_all", "reschedule")
# an agent: creates nothing, reschedules and cancels nothing
AGENT_CHANGES = {"create": ADMIN_REQUIRED, "cancel": SUPERVISOR_REQUIRED,
                 "cancel_all": SUPERVISOR_REQUIRED, "reschedule": SUPERVISOR_REQUIRED}
# a supervisor (or an admin in an agent session): acts on the callbacks, creates none
SUPERVISOR = {**dict.fromkeys(METHODS, OK), "create": ADMIN_REQUIRED}
# caller → what each method answers on the queue the callback belongs to
EXPECTED = {
    "admin": dict.fromkeys(METHODS, OK),
    "admin_in_agent_session": SUPERVISOR,
    "supervisor": SUPERVISOR,
    "agent_of_the_queue": {"list": OK, "get": OK, **AGENT_CHANGES},
    "agent_of_another_queue": {"list": NOT_MEMBER, "get": NOT_MEMBER, **AGENT_CHANGES},
    "agent_of_no_queue": {"list": NOT_MEMBER, "get": NOT_MEMBER, **AGENT_CHANGES},
}
SUCCESS = {"list": 200, "get": 200, "create": 201, "cancel": 204, "cancel_all": 200, "reschedule": 200}


def _path(queue_id, callback_id=None) -> str:
    base = f"/api/queues/{queue_id}/callbacks"
    return f"{base}/{callback_id}" if callback_id else base


class Centre:
    """A tenant with two queues, a pending callback in ``queue``, and one user per caller kind."""

    def __init__(self, seed, owner_engine) -> None:
        self.seed, self.engine = seed, owner_engine
        self.tenant = seed.tenant()
        self.queue, self.other_queue = seed.queue(self.tenant), seed.queue(self.tenant)
        seed.user(self.tenant, "boss", role="admin", agent=True)  # an admin who also takes calls
        seed.user(self.tenant, "sue", role="supervisor")
        for name, queue in (("amy", self.queue), ("otto", self.other_queue), ("nora", None)):
            seed.user(self.tenant, name, role="agent", agent=True)
            if queue is not None:
                self.join(name, queue)
        self.callback_id = self.callback()

    def join(self, username: str, queue_id: uuid.UUID) -> None:
        with Session(self.engine) as db, db.begin():
            agent = db.scalar(select(Agent).where(Agent.user_id == self.tenant.users[username].id))
            db.add(AgentQueue(account_id=self.tenant.account_id, agent_id=agent.id, queue_id=queue_id))

    def callback(self) -> uuid.UUID:
        with Session(self.engine, expire_on_commit=False) as db, db.begin():
            row = Callback(id=uuid.uuid4(), account_id=self.tenant.account_id, queue_id=self.queue,
                           phone_number="15550001", priority=0, notes="customer's notes")
            db.add(row)
        return row.id

    def status(self) -> str:
        with Session(self.engine) as db:
            return db.scalar(select(Callback.status).where(Callback.id == self.callback_id))

    def count(self) -> int:
        with Session(self.engine) as db:
            return len(db.scalars(select(Callback.id).where(Callback.queue_id == self.queue)).all())

    def api_key(self, username: str, scopes: list[str]) -> str:
        key = generate_key()
        with Session(self.engine) as db, db.begin():
            db.add(ApiKey(id=uuid.uuid4(), account_id=self.tenant.account_id, name="k",
                          key_hash=hash_key(key), display_prefix=key[:10], scopes=scopes,
                          created_by=self.tenant.users[username].id))
        return key


CALLERS = {  # caller kind → (username, session)
    "admin": ("admin", None),
    "admin_in_agent_session": ("boss", "agent"),
    "supervisor": ("sue", None),
    "agent_of_the_queue": ("amy", None),
    "agent_of_another_queue": ("otto", None),
    "agent_of_no_queue": ("nora", None),
}


def _call(client, method: str, centre: Centre, queue_id=None, **kwargs):
    queue_id = queue_id or centre.queue
    if method == "list":
        return client.get(_path(queue_id), **kwargs)
    if method == "get":
        return client.get(_path(queue_id, centre.callback_id), **kwargs)
    if method == "create":
        return client.post(_path(queue_id), json={"phone_number": "+19005550100", "priority": 1000}, **kwargs)
    if method == "cancel":
        return client.delete(_path(queue_id, centre.callback_id), **kwargs)
    if method == "reschedule":
        return client.patch(_path(queue_id, centre.callback_id), json={"scheduled_at": None}, **kwargs)
    return client.delete(_path(queue_id), **kwargs)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("caller", sorted(CALLERS))
def test_given_a_role_when_using_a_queues_callbacks_then_only_what_the_role_allows(
        api, seed, owner_engine, caller, method):
    centre = Centre(seed, owner_engine)
    username, session = CALLERS[caller]
    client = api.login(centre.tenant, username, session=session)

    response = _call(client, method, centre)

    expected = EXPECTED[caller][method]
    if expected == OK:
        assert response.status_code == SUCCESS[method], response.get_json()
    else:
        assert response.status_code == 403, response.get_json()
        assert response.get_json()["code"] == expected
        assert "15550001" not in response.get_data(as_text=True)  # no customer number leaks
    # the figures a refusal must leave alone: nothing created, nothing cancelled
    cancelled = expected == OK and method in ("cancel", "cancel_all")
    assert centre.status() == ("cancelled" if cancelled else "pending")
    assert centre.count() == (2 if expected == OK and method == "create" else 1)


@pytest.mark.parametrize("caller", ["agent_of_the_queue", "agent_of_another_queue"])
def test_given_an_agent_when_reading_an_unknown_queue_then_403_not_404(api, seed, owner_engine, caller):
    centre = Centre(seed, owner_engine)
    client = api.login(centre.tenant, CALLERS[caller][0])

    response = client.get(_path(uuid.uuid4()))

    assert response.status_code == 403 and response.get_json()["code"] == NOT_MEMBER


def test_given_an_agent_of_the_queue_when_listing_then_the_queues_callbacks_with_notes(api, seed, owner_engine):
    centre = Centre(seed, owner_engine)

    listed = api.login(centre.tenant, "amy").get(_path(centre.queue))
    other = api.login(centre.tenant, "amy").get(_path(centre.other_queue))

    assert [c["id"] for c in listed.get_json()] == [str(centre.callback_id)]
    assert listed.get_json()[0]["notes"] == "customer's notes"
    assert other.status_code == 403 and other.get_json()["code"] == NOT_MEMBER


@pytest.mark.parametrize(("owner", "scope", "expected"), [
    # an agent's key: reads its queue, changes nothing
    ("amy", "queues", {"list": OK, "get": OK, **AGENT_CHANGES}),
    # an agent's key on a queue it is not in
    ("otto", "queues", {"list": NOT_MEMBER, "get": NOT_MEMBER, **AGENT_CHANGES}),
    # a supervisor's key: reads, reschedules and cancels, creates nothing
    ("sue", "queues", SUPERVISOR),
    ("admin", "queues", dict.fromkeys(METHODS, OK)),
    # a read-only key of an admin: the scope refuses the changes first
    ("admin", "queues:read", {"list": OK, "get": OK, "create": "scope_required",
                              "cancel": "scope_required", "cancel_all": "scope_required", "reschedule": "scope_required"}),
])
@pytest.mark.parametrize("method", METHODS)
def test_given_an_api_key_when_using_callbacks_then_it_acts_with_its_creators_role(
        api, seed, owner_engine, owner, scope, expected, method):
    centre = Centre(seed, owner_engine)
    key = centre.api_key(owner, [scope])

    response = _call(api.anonymous(centre.tenant.host), method, centre, headers={"X-API-Key": key})

    if expected[method] == OK:
        assert response.status_code == SUCCESS[method], response.get_json()
    else:
        assert response.status_code == 403 and response.get_json()["code"] == expected[method], \
            response.get_json()
    assert centre.count() == (2 if expected[method] == OK and method == "create" else 1)
