"""The per-request session: every transaction it begins is scoped to the caller's tenant, and a
failing ``with tenant_db()`` block leaves nothing behind."""
from __future__ import annotations

import uuid

import pytest
from flask import jsonify
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.api.app import create_app
from app.api.security import current_identity, tenant_db
from app.errors import Conflict
from app.models.contact_center import Callback, Queue
from tests.plugins.api import ApiHarness


@pytest.fixture
def harness(database):
    """An app with test-only /api/ routes (authenticated by the same before_request hook)."""
    app = create_app({"TESTING": True})

    def two_transactions():
        with tenant_db() as db:
            first = db.scalar(select(func.count()).select_from(Queue))
        with tenant_db() as db:  # a new transaction on the same session: still scoped
            second = db.scalar(select(func.count()).select_from(Queue))
        return jsonify(first=first, second=second)

    def write_then_fail(queue_id):
        me = current_identity()
        with tenant_db() as db:
            db.add(Callback(id=uuid.uuid4(), account_id=me.account_id, queue_id=uuid.UUID(queue_id),
                            phone_number="15550000"))
            db.flush()
            raise Conflict("rolled back on purpose", code="test_conflict")

    app.add_url_rule("/api/__test__/two-transactions", "two", two_transactions)
    app.add_url_rule("/api/__test__/write-then-fail/<queue_id>", "fail", write_then_fail, methods=["POST"])
    return ApiHarness(app)


def test_given_two_tenant_db_blocks_in_one_request_when_reading_then_both_see_only_the_callers_rows(harness, seed):
    acme, globex = seed.tenant(), seed.tenant()
    seed.queue(acme)
    seed.queue(globex)
    seed.queue(globex)
    body = harness.login(acme).get("/api/__test__/two-transactions").get_json()
    assert body == {"first": 1, "second": 1}


def test_given_a_tenant_db_block_that_raises_when_it_wrote_then_the_write_is_rolled_back(harness, seed, owner_engine):
    acme = seed.tenant()
    queue_id = seed.queue(acme)
    response = harness.login(acme).post(f"/api/__test__/write-then-fail/{queue_id}")
    assert response.status_code == 409 and response.get_json()["code"] == "test_conflict"
    with Session(owner_engine) as db:
        assert db.scalar(select(func.count()).select_from(Callback).where(Callback.queue_id == queue_id)) == 0


def test_given_the_test_routes_when_called_without_token_then_the_global_guard_refuses(harness, seed):
    acme = seed.tenant()
    response = harness.anonymous(acme.host).get("/api/__test__/two-transactions")
    assert response.status_code == 401 and response.get_json()["code"] == "missing_token"
