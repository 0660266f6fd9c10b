"""The suite's OpenID provider: ``oidc-provider`` (npm, OpenID Certified; pinned in
tests/sso/provider/package.json, installed by scripts/install) run by node on 127.0.0.1, two
issuers sharing the test's signing key, and an HTTP driver for its sign-in pages.

The product reaches it through the URL guard with ``SBC_ALLOW_LOOPBACK_SSO=1`` (tests/conftest.py)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import requests
from joserfc import jwt
from joserfc.jwk import RSAKey

from tests.faults.processes import free_port, stop
from tests.plugins.eventually import NotYet, eventually

PROVIDER_DIR = Path(__file__).resolve().parent / "provider"
# the people the provider knows (any other login name signs in with no groups)
ACCOUNTS: dict[str, dict[str, Any]] = {
    "alice": {"groups": ["sbc-admins", "staff"]},
    "bob": {"groups": ["staff"]},
}


def missing_reason() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed (bash scripts/install-system)"
    if not (PROVIDER_DIR / "node_modules" / "oidc-provider").is_dir():
        return "tests/sso/provider has no node_modules (bash scripts/install runs npm ci)"
    return None


class OidcProviders:
    """One node process serving ``count`` issuers; ``stop()`` ends it."""

    def __init__(self, count: int = 2) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": uuid.uuid4().hex, "use": "sig", "alg": "RS256"})
        self.ports = [free_port() for _ in range(count)]
        self.issuers = [f"http://127.0.0.1:{port}" for port in self.ports]
        self.workdir = Path(tempfile.mkdtemp(prefix="sbc-oidc-"))
        config = self.workdir / "config.json"
        config.write_text(json.dumps({"ports": self.ports, "jwk": self.key.as_dict(private=True),
                                      "accounts": ACCOUNTS}))
        self.log = self.workdir / "provider.log"
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(["node", "provider.mjs", str(config)], cwd=PROVIDER_DIR,
                                         stdout=out, stderr=subprocess.STDOUT)
        try:
            for issuer in self.issuers:
                eventually(lambda issuer=issuer: self._discoverable(issuer), timeout=30,
                           what=f"{issuer} discovery")
        except NotYet:
            text = self.log.read_text(errors="replace")
            self.stop()
            raise RuntimeError(f"oidc-provider never answered:\n{text}") from None

    @staticmethod
    def _discoverable(issuer: str) -> bool:
        try:
            return requests.get(issuer + "/.well-known/openid-configuration", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    def stop(self) -> None:
        stop(self.proc)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def register_client(self, issuer: str, redirect_uris: list[str]) -> tuple[str, str]:
        """A new client at ``issuer`` (Dynamic Client Registration): (client_id, client_secret)."""
        answer = requests.post(issuer + "/reg", json={
            "redirect_uris": redirect_uris, "grant_types": ["authorization_code"], "response_types": ["code"],
            "token_endpoint_auth_method": "client_secret_basic"}, timeout=5)
        assert answer.status_code == 201, answer.text
        body = answer.json()
        return body["client_id"], body["client_secret"]

    def mint_id_token(self, **claims: Any) -> str:
        """An ID token signed with the providers' own key (for checks the flow cannot provoke)."""
        now = int(time.time())
        body = {"iat": now, "exp": now + 600, **claims}
        return jwt.encode({"alg": "RS256", "kid": self.key.kid}, body, self.key)


_FORM = re.compile(r'<form[^>]*action="([^"]+)"[^>]*>(.*?)</form>', re.S)
_INPUT = re.compile(r'<input[^>]*name="([^"]+)"(?:[^>]*value="([^"]*)")?', re.S)


def sign_in_at_provider(authorization_url: str, login: str) -> dict[str, str]:
    """Follow the provider's pages as a browser would (login as ``login``, then consent) until it
    redirects away from itself; returns that redirect's query (code, state, iss)."""
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(authorization_url))
    browser = requests.Session()
    response = browser.get(authorization_url, allow_redirects=False, timeout=5)
    for _ in range(12):
        if response.status_code in (302, 303):
            target = urljoin(response.url, response.headers["Location"])
            if not target.startswith(origin):
                return {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
            response = browser.get(target, allow_redirects=False, timeout=5)
            continue
        assert response.status_code == 200, (response.status_code, response.text[:500])
        form = _FORM.search(response.text)
        assert form is not None, response.text[:500]
        fields = {name: unescape(value or "") for name, value in _INPUT.findall(form.group(2))}
        if "login" in fields:
            fields.update(login=login, password="any password")
        response = browser.post(urljoin(response.url, unescape(form.group(1))), data=fields,
                                allow_redirects=False, timeout=5)
    raise AssertionError("the provider never redirected back")
