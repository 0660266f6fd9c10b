"""The agents' FreeSWITCH directory is generated from the database (docs/agents.md): written
with each account's agents under the account's subdomain, applied with reloadxml, and left as
it is when the database cannot be reached (the switch keeps authenticating its agents)."""
from __future__ import annotations

import uuid

from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from app.contact.credentials import a1_hash
from app.contact.directory import DIRECTORY_FILE, DirectoryWriter, load_directory_users
from app.crypto import encrypt_secret
from app.models import Agent, User
from app.routing.fsconfig import GatewayDiff, apply_to_freeswitch


def _agent_with_credentials(owner_engine, tenant, password: str) -> Agent:
    with Session(owner_engine, expire_on_commit=False) as db, db.begin():
        user = User(id=uuid.uuid4(), account_id=tenant.account_id, username=f"u{uuid.uuid4().hex[:6]}",
                    password_hash="x", role="agent")
        db.add(user)
        db.flush()
        agent = Agent(id=uuid.uuid4(), account_id=tenant.account_id, user_id=user.id,
                      sip_username=f"ag{uuid.uuid4().hex[:12]}", sip_password_encrypted=encrypt_secret(password))
        db.add(agent)
    return agent


def test_given_agents_with_credentials_when_the_directory_is_written_then_each_is_under_its_account_domain(
        seed, owner_engine, tmp_path):
    tenant = seed.tenant()
    agent = _agent_with_credentials(owner_engine, tenant, "secret-one")
    assert DirectoryWriter(tmp_path).write() is True
    xml = (tmp_path / DIRECTORY_FILE).read_text()
    domain = xml.split(f'<domain name="{tenant.subdomain}">')[1].split("</domain>")[0]
    assert f'<user id="{agent.sip_username}">' in domain
    assert a1_hash(agent.sip_username, tenant.subdomain, "secret-one") in domain
    assert "secret-one" not in xml
    assert DirectoryWriter(tmp_path).write() is False  # unchanged: no reloadxml needed


def test_given_the_database_is_unreachable_when_the_directory_is_rewritten_then_the_last_file_stays(
        seed, owner_engine, tmp_path):
    tenant = seed.tenant()
    agent = _agent_with_credentials(owner_engine, tenant, "secret-two")
    DirectoryWriter(tmp_path).write()
    before = (tmp_path / DIRECTORY_FILE).read_text()
    closed = create_engine("postgresql+psycopg2://nobody@127.0.0.1:1/none", connect_args={"connect_timeout": 1})

    def load_from_down_database():
        with closed.connect() as conn:  # OperationalError: connection refused
            conn.execute(text("SELECT 1"))
        return load_directory_users()

    assert DirectoryWriter(tmp_path, loader=load_from_down_database).write() is False
    assert (tmp_path / DIRECTORY_FILE).read_text() == before and agent.sip_username in before


class _Recorder:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def api(self, command: str, timeout: float | None = None) -> str:
        self.sent.append(command)
        return "+OK"


def test_given_only_the_directory_changed_when_applied_then_reloadxml_is_sent():
    esl = _Recorder()
    apply_to_freeswitch(esl, False, GatewayDiff((), (), ()), xml_changed=True)
    assert esl.sent == ["reloadxml"]
    esl = _Recorder()
    apply_to_freeswitch(esl, True, GatewayDiff((), (), ()), xml_changed=True)
    assert esl.sent == ["reloadacl"]  # reloadacl re-reads the XML itself
