"""``sbc api`` serves the built console (web/) under /console/ on its own origin, and nothing of
it shadows the API, auth or health routes (issue 22)."""
from __future__ import annotations

import gzip
import re

import pytest

from app.api.console import STATIC_DIR
from tests.plugins.skips import skip_or_fail_in_ci


@pytest.fixture
def built() -> str:
    index = STATIC_DIR / "index.html"
    if not index.is_file():
        skip_or_fail_in_ci("the console is not built (bash scripts/install runs npm ci and the build in web/)")
    return index.read_text()


@pytest.mark.parametrize("path", ["/console/", "/console/numbers", "/console/numbers/1234/deep", "/console/login?next=/calls"])
def test_given_the_built_console_when_any_screen_address_is_opened_then_the_one_page_answers_with_a_strict_csp(
        api, built, path):
    response = api.client.get(path, headers={"Host": "acme.localhost"})
    assert response.status_code == 200
    assert response.get_data(as_text=True) == built
    assert response.headers["Cache-Control"] == "no-cache"
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self';" in csp and "unsafe-inline" not in csp


def test_given_the_built_console_when_its_assets_are_fetched_then_each_is_served_and_cached_for_good(api, built):
    names = re.findall(r'/console/assets/([\w.-]+)', built)
    assert any(name.endswith(".js") for name in names) and any(name.endswith(".css") for name in names)
    for name in names:
        response = api.client.get(f"/console/assets/{name}")
        assert response.status_code == 200, name
        assert response.data == (STATIC_DIR / "assets" / name).read_bytes()
        assert "immutable" in response.headers["Cache-Control"]
        assert "Content-Encoding" not in response.headers


def test_given_a_browser_that_accepts_gzip_when_assets_are_fetched_then_they_are_sent_gzipped(api, built):
    for name in re.findall(r'/console/assets/([\w.-]+)', built):
        response = api.client.get(f"/console/assets/{name}", headers={"Accept-Encoding": "gzip, deflate, br"})
        raw = (STATIC_DIR / "assets" / name).read_bytes()
        assert response.headers["Content-Encoding"] == "gzip" and response.headers["Vary"] == "Accept-Encoding"
        assert gzip.decompress(response.data) == raw
        assert len(response.data) < len(raw) / 2
        assert response.mimetype in ("text/javascript", "application/javascript", "text/css")


@pytest.mark.parametrize("path", ["/console/assets/missing.js", "/console/assets/../index.html",
                                  "/console/assets/%2e%2e/%2e%2e/__init__.py", "/console/assets/../../__init__.py"])
@pytest.mark.parametrize("encoding", ["", "gzip"])
def test_given_a_path_outside_the_built_assets_when_fetched_then_404_json_and_no_file(api, built, path, encoding):
    response = api.client.get(path, headers={"Accept-Encoding": encoding})
    assert response.status_code == 404
    assert response.get_json()["code"] == "not_found"


def test_given_the_console_when_api_auth_and_health_paths_are_called_then_they_answer_as_before(api, built):
    assert api.client.get("/api/phone-numbers", headers={"Host": "acme.localhost"}).get_json()["code"] == "missing_token"
    assert api.client.post("/auth/logout").status_code == 204
    assert api.client.get("/healthz").status_code == 200
    assert api.client.get("/api/openapi.json").status_code == 200
    root = api.client.get("/")
    assert root.status_code == 302 and root.headers["Location"].endswith("/console/")
    assert api.client.get("/console").headers["Location"].endswith("/console/")
