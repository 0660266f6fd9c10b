"""The directory lookup behind ``dial`` targets of type ``user`` (app/contact/directory.py
``find_directory_user``): the account's own agents with SIP credentials, read under its
row-level security, so another tenant's SIP user is never found."""
from __future__ import annotations

import uuid

from app.contact.directory import find_directory_user
from app.crypto import encrypt_secret
from app.db import tenant_session
from app.models import Agent, User


def _agent(account, *, credentials: bool = True) -> str:
    sip = "ag" + uuid.uuid4().hex[:12]
    with tenant_session(account.id) as db:
        user = User(id=uuid.uuid4(), account_id=account.id, username=f"u{sip}", password_hash="x", role="agent")
        db.add(user)
        db.flush()
        db.add(Agent(id=uuid.uuid4(), account_id=account.id, user_id=user.id, sip_username=sip,
                     sip_password_encrypted=encrypt_secret("pw-123456789") if credentials else None))
    return sip


def test_given_an_agent_with_credentials_when_looked_up_in_its_account_then_found_in_its_subdomain(make_account):
    account = make_account()
    sip = _agent(account)

    entry = find_directory_user(str(account.id), sip)

    assert (entry.username, entry.domain) == (sip, account.subdomain)


def test_given_another_tenants_sip_user_when_looked_up_then_not_found(make_account):
    mine, theirs = make_account(), make_account()
    their_sip = _agent(theirs)

    assert find_directory_user(str(mine.id), their_sip) is None
    assert find_directory_user(str(theirs.id), their_sip) is not None


def test_given_an_agent_without_sip_credentials_when_looked_up_then_not_found(make_account):
    account = make_account()
    sip = _agent(account, credentials=False)

    assert find_directory_user(str(account.id), sip) is None
