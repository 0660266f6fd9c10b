"""The whole code flow in Debian's chromium (playwright-core): the login page's options, the
provider's own sign-in and consent pages (oidc-provider), the API's callback — against the API
served on a real socket, as a person's browser would go."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from gevent.pywsgi import WSGIServer

from tests.plugins.skips import skip_or_fail_in_ci
from tests.sso.provider import PROVIDER_DIR

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
BROWSER_TIMEOUT_SECONDS = 90


def test_given_a_tenant_with_sso_when_a_person_signs_in_in_chromium_then_the_callback_answers_a_working_login(
        api, seed, oidc, tmp_path: Path):
    if not Path(CHROMIUM).exists() or not (PROVIDER_DIR / "node_modules" / "playwright-core").is_dir():
        skip_or_fail_in_ci(f"chromium ({CHROMIUM}) or playwright-core (scripts/install) is missing")
    server = WSGIServer(("127.0.0.1", 0), api.app, log=None)
    server.start()
    try:
        acme = seed.tenant()
        origin = f"http://{acme.host}:{server.server_port}"
        client_id, secret = oidc.register_client(oidc.issuers[0], [f"{origin}/auth/sso/callback"])
        configured = api.login(acme).put("/api/account/sso", json={
            "issuer": oidc.issuers[0], "client_id": client_id, "client_secret": secret,
            "display_name": "Example IdP", "role_claim": "groups",
            "role_mapping": [{"value": "staff", "role": "supervisor"}], "create_users": True})
        assert configured.status_code == 200, configured.get_json()

        run = subprocess.run(["node", "browser_sign_in.mjs", origin, "bob", str(tmp_path)], cwd=PROVIDER_DIR,
                             capture_output=True, text=True, timeout=BROWSER_TIMEOUT_SECONDS)
    finally:
        server.stop()
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])

    assert result["options"] == {"enabled": True, "display_name": "Example IdP", "start_url": "/auth/sso/start"}
    assert result["providerPage"].startswith(oidc.issuers[0] + "/interaction/")
    assert result["status"] == 200, result["body"]
    assert result["body"]["account"]["subdomain"] == acme.subdomain
    assert result["body"]["user"]["username"] == "bob" and result["body"]["user"]["role"] == "supervisor"
    token = result["body"]["token"]
    assert api.anonymous(acme.host).with_token(token).get("/auth/mfa").status_code == 200
    keep = os.environ.get("SBC_SSO_SCREENSHOTS")
    if keep:  # look at them: SBC_SSO_SCREENSHOTS=/some/dir
        shutil.copytree(tmp_path, keep, dirs_exist_ok=True)
