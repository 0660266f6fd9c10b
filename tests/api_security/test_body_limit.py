"""Bodies over 1 MiB are 413 in the error shape whatever the transfer encoding: with a
Content-Length werkzeug refuses them; a chunked body used to reach the app silently cut to
1 MiB. Through the real server (gevent's pywsgi decodes the chunks)."""
from __future__ import annotations

import http.client
import json

import pytest

from app.api.app import MAX_BODY_BYTES
from tests.api.test_cli_api import server  # noqa: F401 - the real `sbc api` fixture


def _post(port: int, host: str, body: bytes, *, chunked: bool) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    headers = {"Host": host, "Content-Type": "application/json"}
    if chunked:
        pieces = (body[i:i + 65536] for i in range(0, len(body), 65536))
        conn.request("POST", "/auth/login", body=pieces, headers={**headers, "Transfer-Encoding": "chunked"},
                     encode_chunked=True)
    else:
        conn.request("POST", "/auth/login", body=body, headers=headers)
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    return response.status, json.loads(payload)


def _login_body(padding: int, password: str) -> bytes:
    return json.dumps({"username": "admin", "password": password, "pad": "x" * padding}).encode()


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "content_length"])
def test_given_body_over_the_cap_when_posted_then_413_error_shape(server, seed, chunked):  # noqa: F811
    _proc, port = server
    tenant = seed.tenant()

    status, body = _post(port, tenant.host, _login_body(MAX_BODY_BYTES + 10, "x"), chunked=chunked)

    assert (status, body["code"]) == (413, "payload_too_large"), body


def test_given_chunked_body_within_the_cap_when_posted_then_it_reaches_the_app_whole(server, seed):  # noqa: F811
    _proc, port = server
    tenant = seed.tenant()
    body = json.dumps({"username": "admin", "password": tenant.admin.password}).encode()
    big_but_allowed = json.dumps({"username": "admin", "password": "y" * (MAX_BODY_BYTES - 100)}).encode()

    ok_status, ok = _post(port, tenant.host, body, chunked=True)
    big_status, big = _post(port, tenant.host, big_but_allowed, chunked=True)

    assert ok_status == 200 and ok["token"], ok
    assert big_status == 422 and big["code"] == "validation_failed", big  # password too long: parsed whole
