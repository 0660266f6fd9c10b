"""The two steps of a single sign-on, without HTTP: start (where to send the browser) and finish
(the callback's code → a verified, matched user). The API layer resolves the tenant of the host
name, loads its provider under the tenant's row-level security and issues the login token."""
from __future__ import annotations

from authlib.oauth2.rfc7636 import create_s256_code_challenge
from sqlalchemy.orm import Session

from app import limits
from app.accounts.sso import id_token, issuer
from app.accounts.sso.errors import SsoStateInvalid
from app.accounts.sso.flow_state import FlowStates, PendingSignIn
from app.accounts.sso.identities import SignedIn, sign_in
from app.crypto import decrypt_secret
from app.models.sso import SsoProvider

SCOPES = "openid profile email"


def start(provider: SsoProvider, states: FlowStates, *, tenant: str, session: str | None,
          redirect_uri: str) -> tuple[str, int]:
    """(authorization URL, seconds the sign-in may take): code flow, PKCE S256, state, nonce."""
    metadata = issuer.discover(provider.issuer)
    state, pending = states.put(tenant=tenant, account_id=provider.account_id, session=session,
                                redirect_uri=redirect_uri)
    url = issuer.authorization_url(metadata, {
        "response_type": "code", "client_id": provider.client_id, "redirect_uri": redirect_uri,
        "scope": SCOPES, "state": state, "nonce": pending.nonce,
        "code_challenge": create_s256_code_challenge(pending.code_verifier), "code_challenge_method": "S256",
    })
    return url, limits.SSO_STATE_SECONDS


def take_state(states: FlowStates, state: str, tenant: str) -> PendingSignIn:
    """The started sign-in (removed: single use), or ``sso_state_invalid`` — also when it was
    started on another tenant's host, which burns it (a state is never retried elsewhere)."""
    pending = states.take(state)
    if pending is None or pending.tenant != tenant:
        raise SsoStateInvalid("This sign-in is unknown, expired or already used; start it again.")
    return pending


def finish(db: Session, provider: SsoProvider, pending: PendingSignIn, code: str, now: float) -> SignedIn:
    """Redeem the code, verify the ID token against this tenant's provider, match the user."""
    metadata = issuer.discover(provider.issuer)
    tokens = issuer.redeem_code(metadata, client_id=provider.client_id,
                                client_secret=decrypt_secret(provider.client_secret_encrypted), code=code,
                                redirect_uri=pending.redirect_uri, code_verifier=pending.code_verifier)
    claims = id_token.verify(tokens.get("id_token"), jwks=issuer.key_set(metadata), issuer=provider.issuer,
                             client_id=provider.client_id, nonce=pending.nonce, now=now)
    return sign_in(db, provider, claims)
