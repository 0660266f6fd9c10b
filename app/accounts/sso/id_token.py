"""The ID token check (OpenID Connect Core 1.0 §3.1.3.7), with joserfc (Authlib's JOSE library).

In this order, each refusal its own code (``app.accounts.sso.errors``):

1. the JWS signature, with a key from the issuer's JWKS (fetched through the URL guard) and an
   asymmetric algorithm only — ``none`` and HMAC (keyed with the client secret) are refused, so
   nobody holding the secret, nor nobody at all, can mint a token;
2. ``iss`` is exactly the tenant's configured issuer (``sso_issuer_mismatch``);
3. ``aud`` contains our client id, and with several audiences ``azp`` is our client id
   (``sso_audience_mismatch``);
4. ``exp`` in the future and ``iat`` not in the future, both with ``SSO_CLOCK_SKEW_SECONDS`` of
   leeway (``sso_token_expired``);
5. ``nonce`` equals the one this sign-in sent (``sso_nonce_mismatch``);
6. ``sub`` present (``sso_token_invalid``).
"""
from __future__ import annotations

import hmac
from typing import Any

from joserfc import jwt
from joserfc.errors import ClaimError, ExpiredTokenError, JoseError
from joserfc.jwk import KeySet
from joserfc.jwt import JWTClaimsRegistry

from app import limits
from app.accounts.sso.errors import (
    SsoAudienceMismatch,
    SsoIssuerMismatch,
    SsoNonceMismatch,
    SsoProviderUnavailable,
    SsoSignatureInvalid,
    SsoTokenExpired,
    SsoTokenInvalid,
)

ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


def _keys(jwks: dict[str, Any]) -> KeySet:
    try:
        return KeySet.import_key_set(jwks)  # type: ignore[arg-type]
    except (JoseError, ValueError, TypeError, KeyError):
        raise SsoProviderUnavailable("The identity provider's key set cannot be read.",
                                     details={"reason": "bad_jwks", "endpoint": "jwks"}) from None


def verify(raw: object, *, jwks: dict[str, Any], issuer: str, client_id: str, nonce: str,
           now: float) -> dict[str, Any]:
    """The verified claims of ``raw``, or one of the refusals above."""
    if not isinstance(raw, str) or raw.count(".") != 2:
        raise SsoTokenInvalid("The identity provider sent no usable ID token.")
    try:
        token = jwt.decode(raw, _keys(jwks), algorithms=list(ALGORITHMS))
    except SsoProviderUnavailable:
        raise
    except JoseError:
        raise SsoSignatureInvalid("The ID token's signature does not verify with the issuer's keys.") from None
    except (ValueError, TypeError):
        raise SsoTokenInvalid("The ID token cannot be read.") from None
    claims = token.claims
    if claims.get("iss") != issuer:
        raise SsoIssuerMismatch("The ID token was issued by another identity provider than this tenant's.")
    audiences = claims.get("aud")
    audiences = [audiences] if isinstance(audiences, str) else audiences
    if (not isinstance(audiences, list) or client_id not in audiences
            or (len(audiences) > 1 and claims.get("azp") != client_id)):
        raise SsoAudienceMismatch("The ID token was issued for another client than this tenant's.")
    registry = JWTClaimsRegistry(now=int(now), leeway=limits.SSO_CLOCK_SKEW_SECONDS,
                                 exp={"essential": True}, iat={"essential": True}, sub={"essential": True})
    try:
        registry.validate(claims)
    except ExpiredTokenError:
        raise SsoTokenExpired("The ID token has expired; sign in again.") from None
    except ClaimError as exc:
        raise SsoTokenInvalid(f"The ID token's '{exc.claim}' claim is missing or not valid.") from None
    if not isinstance(claims.get("sub"), str) or not 0 < len(claims["sub"]) <= 255:
        raise SsoTokenInvalid("The ID token's 'sub' claim is missing or not valid.")
    sent = claims.get("nonce")
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), nonce.encode()):
        raise SsoNonceMismatch("The ID token was not minted for this sign-in (nonce).")
    return dict(claims)
