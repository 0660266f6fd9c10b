"""API test helpers: a Flask test client per test, tenants seeded through the owner role, and an
``ApiClient`` that sends the tenant's Host and Bearer token so tests read like HTTP calls.

    def test_...(api, tenant_factory):
        acme = tenant_factory(licenses=["api-access"])
        admin = api.login(acme)                 # ApiClient for acme's admin (admin session)
        response = admin.post("/api/api-keys", json={"scopes": ["calls"]})

Seeding uses the owner connection (bypasses RLS: it is the test's "operator"), the code under
test runs as ``sbc_app`` through ``tenant_session`` exactly as in production.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Callable, Sequence

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from app.accounts.passwords import hash_password
from app.models.contact_center import Agent, Callback, Queue
from app.models.tenancy import Account, ServiceProvider
from app.models.users import User
from app.settings import get_settings

FAST_BCRYPT_ROUNDS = 4  # the hash records its cost; login verifies any cost
DEFAULT_PASSWORD = "correct horse battery staple"
ALL_LICENSES = ("api-access", "queue-mgmt", "programmable-voice")


@dataclass
class SeedUser:
    id: uuid.UUID
    username: str
    password: str
    role: str
    permissions: list[str]


@dataclass
class Tenant:
    account_id: uuid.UUID
    subdomain: str
    users: dict[str, SeedUser] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return f"{self.subdomain}.{get_settings().base_domain}"

    @property
    def admin(self) -> SeedUser:
        return self.users["admin"]


class ApiClient:
    """Flask test client bound to one tenant host and (optionally) one Bearer token."""

    def __init__(self, client: FlaskClient, host: str, token: str | None = None) -> None:
        self.client, self.host, self.token = client, host, token

    def with_token(self, token: str | None) -> "ApiClient":
        return ApiClient(self.client, self.host, token)

    def on_host(self, host: str) -> "ApiClient":
        return ApiClient(self.client, host, self.token)

    def request(self, method: str, path: str, **kwargs: Any):
        headers = dict(kwargs.pop("headers", None) or {})
        if self.token is not None:
            headers.setdefault("Authorization", f"Bearer {self.token}")
        return self.client.open(path, method=method, base_url=f"http://{self.host}",
                                headers=headers, **kwargs)

    def get(self, path: str, **kwargs: Any):
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any):
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any):
        return self.request("PUT", path, **kwargs)

    def patch(self, path: str, **kwargs: Any):
        return self.request("PATCH", path, **kwargs)

    def delete(self, path: str, **kwargs: Any):
        return self.request("DELETE", path, **kwargs)


class ApiHarness:
    """Entry point handed to tests as the ``api`` fixture."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.client = app.test_client()
        # a loopback address of its own per test: the login throttle's per-address budget of
        # failures is not shared by the whole run
        self.client.environ_base["REMOTE_ADDR"] = f"127.{uuid.uuid4().int % 250 + 1}.{uuid.uuid4().int % 256}.{uuid.uuid4().int % 254 + 1}"

    def anonymous(self, host: str) -> ApiClient:
        return ApiClient(self.client, host)

    def login(self, tenant: Tenant, username: str = "admin", *, session: str | None = None) -> ApiClient:
        user = tenant.users[username]
        body: dict[str, Any] = {"username": user.username, "password": user.password}
        if session:
            body["session"] = session
        response = self.anonymous(tenant.host).post("/auth/login", json=body)
        assert response.status_code == 200, response.get_json()
        return ApiClient(self.client, tenant.host, response.get_json()["token"])

    def mint(self, tenant: Tenant, username: str = "admin", *, session: str = "admin",
             lifetime_seconds: int | None = None, **overrides: Any) -> str:
        """Sign a token directly (expired, tampered-claim and foreign-tenant cases)."""
        from flask_jwt_extended import create_access_token

        user = tenant.users[username]
        claims = {"acct": str(tenant.account_id), "tenant": tenant.subdomain,
                  "session": session, "role": user.role}
        claims.update(overrides)
        with self.app.app_context():
            delta = timedelta(seconds=lifetime_seconds if lifetime_seconds is not None else 3600)
            return create_access_token(identity=str(user.id), additional_claims=claims,
                                       expires_delta=delta)


@pytest.fixture(scope="session")
def api_app(database: str) -> Flask:
    from app.api.app import create_app

    return create_app({"TESTING": True})


@pytest.fixture
def api(api_app: Flask) -> ApiHarness:
    return ApiHarness(api_app)


class Seeder:
    """Creates tenants, users, agents, queues and callbacks as the owner role."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._provider_id: uuid.UUID | None = None

    def _provider(self, db: Session) -> uuid.UUID:
        if self._provider_id is None:
            provider = ServiceProvider(id=uuid.uuid4(), name=f"sp-{uuid.uuid4().hex[:10]}")
            db.add(provider)
            db.flush()
            self._provider_id = provider.id
        return self._provider_id

    def tenant(self, subdomain: str | None = None, licenses: Sequence[str] = ALL_LICENSES) -> Tenant:
        subdomain = subdomain or f"t{uuid.uuid4().hex[:12]}"
        with Session(self.engine, expire_on_commit=False) as db, db.begin():
            account = Account(id=uuid.uuid4(), service_provider_id=self._provider(db),
                              name=subdomain, subdomain=subdomain, licenses=list(licenses))
            db.add(account)
        tenant = Tenant(account_id=account.id, subdomain=subdomain)
        self.user(tenant, "admin", role="admin")
        return tenant

    def user(self, tenant: Tenant, username: str, *, role: str = "agent",
             permissions: Sequence[str] = (), password: str = DEFAULT_PASSWORD,
             agent: bool = False, active: bool = True) -> SeedUser:
        with Session(self.engine, expire_on_commit=False) as db, db.begin():
            user = User(id=uuid.uuid4(), account_id=tenant.account_id, username=username,
                        password_hash=hash_password(password, rounds=FAST_BCRYPT_ROUNDS),
                        role=role, permissions=list(permissions), is_active=active)
            db.add(user)
            db.flush()
            if agent:
                db.add(Agent(id=uuid.uuid4(), account_id=tenant.account_id, user_id=user.id))
        seeded = SeedUser(user.id, username, password, role, list(permissions))
        tenant.users[username] = seeded
        return seeded

    def queue(self, tenant: Tenant, name: str | None = None) -> uuid.UUID:
        with Session(self.engine, expire_on_commit=False) as db, db.begin():
            queue = Queue(id=uuid.uuid4(), account_id=tenant.account_id,
                          name=name or f"q-{uuid.uuid4().hex[:8]}")
            db.add(queue)
        return queue.id

    def set_callback_status(self, callback_id: uuid.UUID | str, status: str) -> None:
        with Session(self.engine, expire_on_commit=False) as db, db.begin():
            row = db.get(Callback, uuid.UUID(str(callback_id)))
            assert row is not None
            row.status = status

    def set_licenses(self, tenant: Tenant, licenses: Sequence[str]) -> None:
        with Session(self.engine, expire_on_commit=False) as db, db.begin():
            db.get(Account, tenant.account_id).licenses = list(licenses)  # type: ignore[union-attr]

    def set_user(self, tenant: Tenant, username: str, **values: Any) -> None:
        with Session(self.engine, expire_on_commit=False) as db, db.begin():
            user = db.get(User, tenant.users[username].id)
            assert user is not None
            for name, value in values.items():
                setattr(user, name, value)


@pytest.fixture
def seed(owner_engine: Engine) -> Seeder:  # owner_engine: tests/plugins/database.py
    return Seeder(owner_engine)


@pytest.fixture
def tenant_factory(seed: Seeder) -> Callable[..., Tenant]:
    return seed.tenant


@pytest.fixture
def bcrypt_checks(monkeypatch) -> list[str]:
    """Every bcrypt comparison login runs (counting, not timing)."""
    import app.api.auth.service as auth_service

    checked: list[str] = []
    real = auth_service.verify_password

    def counting(password: str, stored: str) -> bool:
        checked.append(stored[:4])
        return real(password, stored)

    monkeypatch.setattr(auth_service, "verify_password", counting)
    return checked
