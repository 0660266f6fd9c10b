"""Who a verified ID token is: the stable subject → user, and the claim → role mapping.

A sign-in is matched by ``(iss, sub)`` only (OIDC Core §5.7: the one pair a provider promises
never to reassign). Never by e-mail or user name: a provider lets people choose those, so
matching them would let anyone who can name themself "admin" at the provider take over the
tenant's existing ``admin`` user. A first sign-in creates a user only when the tenant allows it;
that user has an unusable random password (a bcrypt hash of 48 random characters nobody sees)
until an administrator sets one.

Roles: the tenant names a claim (``groups``, ``roles``, ...) whose value — a string or a list of
strings — is looked up in its mapping, first matching rule wins, else the default role, else the
sign-in is refused (``sso_role_not_mapped``). Without a role claim, a created user gets the
default role and an existing user keeps the role the account gave them. The role is re-read at every sign-in, so removing a
person from a group at the provider demotes them at their next sign-in; a changed role signs out
their other sessions (as a role change by an admin does).
"""
from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from typing import Any

import gevent
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app import limits
from app.accounts.passwords import hash_password
from app.accounts.sso.errors import SsoRoleNotMapped, SsoUserDisabled, SsoUserNotProvisioned
from app.accounts.sso.flow_state import new_token
from app.errors import Conflict
from app.models.sso import SsoProvider
from app.models.users import User

# users.username's rule (app/api/users/schemas.py): what a proposed name is reduced to
_USERNAME_CHARS = re.compile(r"[^A-Za-z0-9_.@-]")
_USERNAME_MAX = 200  # room for the "-<8 hex>" suffix a taken name gets


@dataclass(frozen=True)
class SignedIn:
    user: User
    created: bool
    role_changed: bool


def claim_values(claims: dict[str, Any], name: str | None) -> list[str]:
    """The role claim as a list of strings (a string claim is one value; anything else none)."""
    if not name:
        return []
    value = claims.get(name)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value[: limits.SSO_ROLE_CLAIM_VALUES_MAX] if isinstance(v, str)]
    return []


def mapped_role(provider: SsoProvider, claims: dict[str, Any]) -> str | None:
    values = set(claim_values(claims, provider.role_claim))
    for rule in provider.role_mapping or []:
        if rule.get("value") in values:
            return str(rule["role"])
    return provider.default_role


def _proposed_username(claims: dict[str, Any], issuer: str, subject: str) -> tuple[str, str]:
    """(name, fallback): preferred_username, else e-mail, else the subject, reduced to the user
    name rule; the fallback adds 8 hex characters of the subject for a name already taken."""
    for key in ("preferred_username", "email", "sub"):
        value = claims.get(key)
        if isinstance(value, str) and value.strip():
            name = _USERNAME_CHARS.sub("-", value.strip())[:_USERNAME_MAX].lstrip("_.@-") or "sso-user"
            break
    else:
        name = "sso-user"
    suffix = hashlib.sha256(f"{issuer}\0{subject}".encode()).hexdigest()[:8]
    return name, f"{name}-{suffix}"


def _unusable_password_hash() -> str:
    """A bcrypt hash of a random password nobody sees: a password login of this user then costs
    the same bcrypt check as anyone's (no timing tells SSO-only users apart). bcrypt is ~250 ms
    of CPU that releases the GIL: on gevent's native thread pool, as the login's check is."""
    return str(gevent.get_hub().threadpool.apply(hash_password, (new_token(),)))


def _create(db: Session, provider: SsoProvider, claims: dict[str, Any], role: str) -> User:
    issuer, subject = claims["iss"], claims["sub"]
    email = claims.get("email") if isinstance(claims.get("email"), str) and len(claims["email"]) <= 320 else None
    unusable = _unusable_password_hash()
    for username in _proposed_username(claims, issuer, subject):
        try:
            with db.begin_nested():
                user = User(id=uuid.uuid4(), account_id=provider.account_id, username=username,
                            password_hash=unusable, role=role, email=email,
                            sso_issuer=issuer, sso_subject=subject)
                db.add(user)
                db.flush()
            return user
        except IntegrityError:
            existing = _find(db, provider.account_id, issuer, subject)
            if existing is not None:  # a concurrent first sign-in of the same person won
                return existing
    raise Conflict("The identity provider's user name is taken in this account; an administrator "
                   "can create the user.", code="sso_username_taken")


def _find(db: Session, account_id: uuid.UUID, issuer: str, subject: str) -> User | None:
    return db.scalar(select(User).where(User.account_id == account_id, User.sso_issuer == issuer,
                                        User.sso_subject == subject))


def sign_in(db: Session, provider: SsoProvider, claims: dict[str, Any]) -> SignedIn:
    """The user for verified ``claims`` (found, or created if the tenant allows); refusals:
    ``sso_role_not_mapped``, ``sso_user_not_provisioned``, ``sso_user_disabled``."""
    role = mapped_role(provider, claims)
    user = _find(db, provider.account_id, claims["iss"], claims["sub"])
    if user is None:
        if not provider.create_users:
            raise SsoUserNotProvisioned("This person has no user in the account, and the account does "
                                        "not create users at their first sign-in; ask an administrator.")
        if role is None:
            raise SsoRoleNotMapped("The identity provider's claims map to no role in this account.")
        return SignedIn(_create(db, provider, claims, role), created=True, role_changed=False)
    if not user.is_active:
        raise SsoUserDisabled("This user is deactivated in the account.")
    if not provider.role_claim:  # no mapping configured: the account manages roles itself
        return SignedIn(user, created=False, role_changed=False)
    if role is None:
        raise SsoRoleNotMapped("The identity provider's claims map to no role in this account.")
    changed = role != user.role
    if changed:
        user.role = role
        db.flush()
    return SignedIn(user, created=False, role_changed=changed)
