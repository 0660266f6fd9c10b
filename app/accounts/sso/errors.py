"""Refusals of a single sign-on, one stable code each (docs/sso.md "Errors").

The ID token refusals are 401 with their own code so a support engineer can tell "the IdP sent
a token for another client" from "the clocks disagree" without reading logs; none of them echoes
the token or a claim value beyond what the user's own browser already holds."""
from __future__ import annotations

from app.errors import BadRequest, Forbidden, NotFound, SbcError, Unauthorized


class SsoNotConfigured(NotFound):
    code = "sso_not_configured"


class SsoStateInvalid(BadRequest):
    """Unknown, expired, already used, or started on another tenant's host."""

    code = "sso_state_invalid"


class SsoDenied(Unauthorized):
    """The identity provider answered the redirect with an error (user cancelled, ...)."""

    code = "sso_denied"


class SsoProviderUnavailable(SbcError):
    """The identity provider could not be used: refused by the URL guard, unreachable, or an
    answer that is not what OpenID Connect says (details.reason)."""

    status, code = 502, "sso_provider_unavailable"


class SsoTokenInvalid(Unauthorized):
    """The ID token is malformed or lacks a claim the check needs."""

    code = "sso_token_invalid"


class SsoSignatureInvalid(SsoTokenInvalid):
    code = "sso_signature_invalid"


class SsoIssuerMismatch(SsoTokenInvalid):
    """``iss`` is not this tenant's issuer: a token from another tenant's provider lands here."""

    code = "sso_issuer_mismatch"


class SsoAudienceMismatch(SsoTokenInvalid):
    code = "sso_audience_mismatch"


class SsoTokenExpired(SsoTokenInvalid):
    code = "sso_token_expired"


class SsoNonceMismatch(SsoTokenInvalid):
    code = "sso_nonce_mismatch"


class SsoUserNotProvisioned(Forbidden):
    code = "sso_user_not_provisioned"


class SsoRoleNotMapped(Forbidden):
    code = "sso_role_not_mapped"


class SsoUserDisabled(Forbidden):
    code = "sso_user_disabled"
