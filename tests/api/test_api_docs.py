"""/api/docs: interactive API documentation served offline — the page and every asset it loads
come from this server (the pinned swagger-ui-bundle package and our initializer), no CDN."""
from __future__ import annotations

import re

import pytest


def test_given_no_token_when_opening_the_docs_then_the_page_loads_only_local_assets(api, seed):
    client = api.anonymous(seed.tenant().host)
    response = client.get("/api/docs")
    assert response.status_code == 200 and response.mimetype == "text/html"
    html = response.get_data(as_text=True)
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and all(s.startswith("/api/docs/assets/") for s in sources), sources
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    for source in sources:
        asset = client.get(source)
        assert asset.status_code == 200, source
        assert asset.content_length or asset.get_data(), source


def test_given_the_initializer_then_it_points_at_this_hosts_openapi_document(api):
    response = api.anonymous("localhost").get("/api/docs/assets/init.js")
    assert response.status_code == 200
    assert 'url: "/api/openapi.json"' in response.get_data(as_text=True)
    bundle = api.anonymous("localhost").get("/api/docs/assets/swagger-ui-bundle.js")
    assert bundle.status_code == 200 and b"SwaggerUIBundle" in bundle.get_data()


@pytest.mark.parametrize("name", ["index.html", "..%2Fsetup.cfg", "swagger-ui.js.map", "nope.js"])
def test_given_a_file_not_on_the_list_when_asked_then_404(api, name):
    response = api.anonymous("localhost").get(f"/api/docs/assets/{name}")
    assert response.status_code == 404


def test_given_the_docs_page_then_other_api_paths_still_need_a_token(api, seed):
    response = api.anonymous(seed.tenant().host).get("/api/docsX")
    assert response.status_code == 401
