"""TOTP second factor — enrolment, the code check at sign-in, recovery codes, admin reset.

State lives on the user's row (``users.totp_*``, migration 0010) under the tenant's RLS scope;
the arithmetic is ``app.accounts.totp``. The two single-use rules are single SQL statements, so
two API processes racing with the same code cannot both win:

- a TOTP code is accepted only if its time step is later than ``totp_last_step``
  (``UPDATE … WHERE totp_last_step < :step``): replay refused, even within the ±1 step window;
- a recovery code is removed from ``totp_recovery_hashes`` by the same statement that finds it.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import any_, func, literal, or_, update
from sqlalchemy.orm import Session

from app.accounts import totp
from app.crypto import decrypt_secret, encrypt_secret
from app.errors import Conflict, Unauthorized, ValidationFailed
from app.models.tenancy import Account
from app.models.users import User

METHOD_TOTP = "totp"
METHOD_RECOVERY = "recovery_code"


@dataclass(frozen=True)
class Enrolment:
    """What the user sees once: the secret for manual entry, its URI and the QR code."""

    secret: str
    otpauth_uri: str
    qr_svg: str


def is_enrolled(user: User) -> bool:
    return user.totp_confirmed_at is not None


def begin(db: Session, user: User, account: Account) -> Enrolment:
    """A new secret (any unconfirmed one is replaced). 409 ``totp_already_enrolled`` when a
    confirmed one exists: an admin reset (or the user's own, later work) comes first."""
    if is_enrolled(user):
        raise Conflict("A second factor is already enrolled; an administrator can reset it.",
                       code="totp_already_enrolled")
    secret = totp.new_secret()
    user.totp_secret_encrypted = encrypt_secret(secret)
    user.totp_last_step = None
    user.totp_recovery_hashes = []
    db.flush()
    uri = totp.provisioning_uri(secret, user.username, account.subdomain)
    return Enrolment(secret=secret, otpauth_uri=uri, qr_svg=totp.qr_svg_data_uri(uri))


def confirm(db: Session, user: User, code: str, now: float) -> list[str]:
    """Activate the pending secret with its first code; returns the recovery codes (shown once)."""
    if is_enrolled(user):
        raise Conflict("The second factor is already active.", code="totp_already_enrolled")
    if not user.totp_secret_encrypted:
        raise Conflict("Start the enrolment first (POST /auth/mfa/totp).",
                       code="totp_enrolment_not_started")
    step = totp.matching_step(decrypt_secret(user.totp_secret_encrypted), code, now)
    if step is None:
        raise ValidationFailed("That code is not the current one; check the device's clock and "
                               "type the code shown now.", code="invalid_confirmation_code")
    codes = totp.new_recovery_codes()
    user.totp_confirmed_at = datetime.fromtimestamp(now, timezone.utc)
    user.totp_last_step = step
    user.totp_recovery_hashes = [totp.recovery_code_hash(user.id, c) for c in codes]
    db.flush()
    return codes


def verify(db: Session, user: User, code: str, now: float) -> str:
    """Check a sign-in code: a TOTP code (6 digits) or a recovery code (anything else).
    Returns the method used; 401 ``invalid_mfa_code`` / ``mfa_code_reused`` otherwise."""
    if totp.looks_like_totp(code):
        secret = decrypt_secret(user.totp_secret_encrypted or "")
        step = totp.matching_step(secret, code, now)
        if step is None:
            raise _invalid()
        taken = db.execute(
            update(User).where(User.id == user.id, or_(User.totp_last_step.is_(None),
                                                       User.totp_last_step < step))
            .values(totp_last_step=step).execution_options(synchronize_session=False)
        ).rowcount
        if taken != 1:
            raise Unauthorized("This code was already used; wait for the next one.",
                               code="mfa_code_reused")
        return METHOD_TOTP
    if not totp.normalise_recovery_code(code):
        raise _invalid()
    digest = totp.recovery_code_hash(user.id, code)
    used = db.execute(
        update(User).where(User.id == user.id, literal(digest) == any_(User.totp_recovery_hashes))
        .values(totp_recovery_hashes=func.array_remove(User.totp_recovery_hashes, digest))
        .execution_options(synchronize_session=False)
    ).rowcount
    if used != 1:
        raise _invalid()
    return METHOD_RECOVERY


def _invalid() -> Unauthorized:
    return Unauthorized("The code is not valid.", code="invalid_mfa_code")


def reset(db: Session, user: User) -> None:
    """Forget the secret and the recovery codes (the admin's reset: a lost device)."""
    user.totp_secret_encrypted = None
    user.totp_confirmed_at = None
    user.totp_last_step = None
    user.totp_recovery_hashes = []
    db.flush()


def status(user: User, account: Account) -> dict[str, object]:
    state = "enrolled" if is_enrolled(user) else "pending" if user.totp_secret_encrypted else "none"
    return {"totp": state, "enrolled_at": user.totp_confirmed_at,
            "recovery_codes_left": len(user.totp_recovery_hashes or []) if is_enrolled(user) else 0,
            "required_by_account": bool(account.mfa_required)}


def regenerate_recovery_codes(db: Session, user: User, code: str, now: float) -> list[str]:
    """New recovery codes (the old ones stop working), against a current authenticator code."""
    if not is_enrolled(user):
        raise Conflict("No second factor is enrolled.", code="totp_not_enrolled")
    if not totp.looks_like_totp(code):
        raise _invalid()
    verify(db, user, code, now)
    codes = totp.new_recovery_codes()
    user.totp_recovery_hashes = [totp.recovery_code_hash(user.id, c) for c in codes]
    db.flush()
    return codes
