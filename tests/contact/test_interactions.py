"""set_disposition: an agent sets a disposition code on the interaction it owned (found by call
id, trace id, or its latest), tenant- and agent-scoped, on the real PostgreSQL (RLS role)."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from app import limits
from app.contact.interactions import InteractionNotFound, InvalidDisposition, set_disposition
from app.db.engine import tenant_session
from app.models import InteractionSegment, InteractionSummary


def _segment(account_id, agent_id, *, call_id=None, trace_id=None, ago_seconds=0) -> InteractionSegment:
    seg = InteractionSegment(account_id=account_id, agent_id=agent_id, call_id=call_id or uuid.uuid4(),
                             trace_id=trace_id or uuid.uuid4(),
                             started_at=datetime.now(timezone.utc) - timedelta(seconds=ago_seconds))
    with tenant_session(account_id) as db:
        db.add(seg)
    return seg


def _disposition(account_id, trace_id):
    with tenant_session(account_id) as db:
        return db.scalar(select(InteractionSummary.disposition).where(InteractionSummary.trace_id == trace_id))


def test_given_a_live_call_of_the_agent_when_disposition_by_call_id_then_summary_row_carries_it(make_account):
    account, agent = make_account(), uuid.uuid4()
    seg = _segment(account.id, agent)
    with tenant_session(account.id) as db:
        result = set_disposition(db, account.id, agent, "sale", call_id=seg.call_id)
    assert (result.trace_id, result.call_id, result.code) == (seg.trace_id, seg.call_id, "sale")
    assert _disposition(account.id, seg.trace_id) == "sale"
    with tenant_session(account.id) as db:  # a second one replaces it
        set_disposition(db, account.id, agent, "callback", trace_id=seg.trace_id)
    assert _disposition(account.id, seg.trace_id) == "callback"


def test_given_no_call_named_then_the_agents_latest_interaction_is_used(make_account):
    account, agent = make_account(), uuid.uuid4()
    older = _segment(account.id, agent, ago_seconds=600)
    latest = _segment(account.id, agent, ago_seconds=5)
    with tenant_session(account.id) as db:
        assert set_disposition(db, account.id, agent, "resolved").trace_id == latest.trace_id
    assert _disposition(account.id, older.trace_id) is None


def test_given_another_agents_or_tenants_call_then_interaction_not_found(make_account):
    account, other_account, agent = make_account(), make_account(), uuid.uuid4()
    mine = _segment(account.id, agent)
    theirs = _segment(account.id, uuid.uuid4())
    foreign = _segment(other_account.id, agent)
    for call_id in (theirs.call_id, foreign.call_id, uuid.uuid4()):
        with pytest.raises(InteractionNotFound) as err, tenant_session(account.id) as db:
            set_disposition(db, account.id, agent, "sale", call_id=call_id)
        assert (err.value.status, err.value.code) == (404, "interaction_not_found")
    with pytest.raises(InteractionNotFound), tenant_session(account.id) as db:  # call and trace disagree
        set_disposition(db, account.id, agent, "sale", call_id=mine.call_id, trace_id=theirs.trace_id)
    with pytest.raises(InteractionNotFound), tenant_session(account.id) as db:  # no interaction at all
        set_disposition(db, account.id, uuid.uuid4(), "sale")
    assert _disposition(account.id, theirs.trace_id) is None


@pytest.mark.parametrize("code", ["", "x" * (limits.DISPOSITION_MAX_LENGTH + 1), " sale", "sale\n",
                                  "a\x00b", 42, None, ["sale"]])
def test_given_a_bad_code_then_invalid_disposition_and_nothing_written(make_account, code):
    account, agent = make_account(), uuid.uuid4()
    seg = _segment(account.id, agent)
    with pytest.raises(InvalidDisposition) as err, tenant_session(account.id) as db:
        set_disposition(db, account.id, agent, code, call_id=seg.call_id)
    assert (err.value.status, err.value.code) == (422, "invalid_disposition")
    assert _disposition(account.id, seg.trace_id) is None


def test_given_the_longest_code_and_unicode_then_accepted(make_account):
    account, agent = make_account(), uuid.uuid4()
    seg = _segment(account.id, agent)
    for code in ("x" * limits.DISPOSITION_MAX_LENGTH, "vente conclue ✓"):
        with tenant_session(account.id) as db:
            set_disposition(db, account.id, agent, code)
        assert _disposition(account.id, seg.trace_id) == code
