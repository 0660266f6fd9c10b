"""Process settings, read once from the environment.

Only what is needed to reach the shared services lives here; everything else is runtime
configuration in the ``cluster_config`` table (see ``app.config``), so an air-gapped
deployment needs no configuration fetch at boot.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit


def _with_user(url: str, user: str) -> str:
    """Same database URL, another role: the API and platform roles share the host and db."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, f"{user}@{host}", parts.path, parts.query, parts.fragment))


# Public, so anyone could sign tokens with it: accepted only while the API listens on loopback
# addresses only (development); ``app.api.bind_guard`` refuses it on any other bind.
DEV_JWT_SECRET = "dev-only-change-me-" + "0" * 16
DEV_BASE_DOMAIN = "localhost"
# FreeSWITCH's stock event-socket password: what a switch started without FS_ESL_PASSWORD uses.
FREESWITCH_DEFAULT_ESL_PASSWORD = "ClueCon"


@dataclass(frozen=True)
class Settings:
    database_url: str          # owner role: migrations only
    app_database_url: str      # tenant-scoped role: no superuser, no owner, no BYPASSRLS
    platform_database_url: str # explicit cross-tenant path (number lookup, dispatchers)
    redis_url: str
    redis_key_prefix: str      # namespaces every key, so tests and tenants of Redis never collide
    amqp_url: str
    jwt_secret: str
    base_domain: str
    secret_key: str            # encrypts signing secrets at rest (Fernet key derivation input)
    allow_loopback_webhooks: bool  # development/tests only: see README "Webhook SSRF guard"
    allow_loopback_sso: bool   # development/tests only: an identity provider on loopback (docs/sso.md)
    # FS_ESL_PASSWORD: the secret docker-compose gives FreeSWITCH (fs-conf/vars.xml); the
    # controller logs in with it unless a freeswitch.nodes entry names its own password
    freeswitch_esl_password: str


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    env = os.environ
    owner = env.get("SBC_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/sbc")
    jwt_secret = env.get("SBC_JWT_SECRET", DEV_JWT_SECRET)
    return Settings(
        database_url=owner,
        app_database_url=env.get("SBC_APP_DATABASE_URL", _with_user(owner, "sbc_app")),
        platform_database_url=env.get("SBC_PLATFORM_DATABASE_URL", _with_user(owner, "sbc_platform")),
        redis_url=env.get("SBC_REDIS_URL", "redis://127.0.0.1:6379/0"),
        redis_key_prefix=env.get("SBC_REDIS_KEY_PREFIX", "sbc:"),
        amqp_url=env.get("SBC_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/%2F"),
        jwt_secret=jwt_secret,
        base_domain=env.get("SBC_BASE_DOMAIN", DEV_BASE_DOMAIN),
        secret_key=env.get("SBC_SECRET_KEY", jwt_secret),
        allow_loopback_webhooks=env.get("SBC_ALLOW_LOOPBACK_WEBHOOKS", "0") == "1",
        allow_loopback_sso=env.get("SBC_ALLOW_LOOPBACK_SSO", "0") == "1",
        freeswitch_esl_password=env.get("FS_ESL_PASSWORD") or FREESWITCH_DEFAULT_ESL_PASSWORD,
    )
