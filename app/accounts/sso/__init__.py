"""OIDC single sign-on per tenant (docs/sso.md): the tenant's identity provider signs its users in
with the authorization code flow and PKCE; the result is the same login token as a password.

- ``errors``: every refusal, each with its own stable code;
- ``issuer``: HTTP to the identity provider (discovery, token, JWKS), every URL through the
  webhook URL guard at the moment of use;
- ``flow_state``: the single-use state/nonce/verifier record of a started sign-in (Redis);
- ``id_token``: the ID token check (signature from the issuer's JWKS, iss, aud, exp, nonce);
- ``identities``: the stable subject → user, the claim → role mapping, first sign-in creation;
- ``service``: start and finish, the two steps the API exposes.
"""
