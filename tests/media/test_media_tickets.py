"""Media tickets: ``POST /api/recordings/:id/tickets`` and ``GET /api/recordings/:id/stream?ticket=``,
the console player's way to stream a recording with HTTP Range without the token in a URL.
Real Flask app as the API role (row-level security), real Redis and PostgreSQL."""
from __future__ import annotations

import hashlib

import pytest

from app import limits
from app.accounts.login_throttle import throttle_client
from app.settings import get_settings
from tests.api_management.helpers import admin_client, assert_error
from tests.media.recorded_calls import seed_recorded_call
from tests.media.test_api import _owned, storage  # noqa: F401  (fixture)
from tests.plugins.eventually import eventually

CONTENT = bytes(range(256)) * 40


def _ticket(client, recording_id) -> dict:
    response = client.post(f"/api/recordings/{recording_id}/tickets")
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def _stored_key(ticket: str) -> str:
    return f"{get_settings().redis_key_prefix}media-ticket:{hashlib.sha256(ticket.encode()).hexdigest()}"


@pytest.fixture
def recorded(api, seed, storage):  # noqa: F811
    tenant, admin = admin_client(api, seed)
    path = _owned(storage, tenant.account_id)
    path.write_bytes(CONTENT)
    return tenant, admin, seed_recorded_call(tenant.account_id, path)


def test_a_ticket_streams_the_recording_by_range_without_a_token_for_several_requests(api, recorded):
    tenant, admin, call = recorded
    body = _ticket(admin, call.recording_id)
    assert body["expires_in_seconds"] == limits.RECORDING_MEDIA_TICKET_TTL_SECONDS
    assert body["stream_url"] == f"/api/recordings/{call.recording_id}/stream?ticket={body['ticket']}"
    player = api.anonymous(tenant.host)  # an <audio> element: no Authorization header

    first = player.get(body["stream_url"], headers={"Range": "bytes=0-99"})
    seek = player.get(body["stream_url"], headers={"Range": "bytes=5000-5119"})
    whole = player.get(body["stream_url"])

    assert first.status_code == 206 and first.data == CONTENT[:100]
    assert first.headers["Content-Range"] == f"bytes 0-99/{len(CONTENT)}"
    assert seek.status_code == 206 and seek.data == CONTENT[5000:5120]
    assert whole.status_code == 200 and whole.data == CONTENT and whole.mimetype == "audio/wav"
    assert whole.headers["Cache-Control"] == "private, no-store"


def test_only_the_tickets_hash_is_stored_and_it_expires(api, recorded):
    tenant, admin, call = recorded
    ticket = _ticket(admin, call.recording_id)["ticket"]
    redis = throttle_client(get_settings().redis_url)
    key = _stored_key(ticket)
    assert 0 < redis.ttl(key) <= limits.RECORDING_MEDIA_TICKET_TTL_SECONDS
    assert ticket not in redis.get(key).decode()

    redis.pexpire(key, 1)  # the TTL running out, without waiting 300 s
    player = api.anonymous(tenant.host)
    eventually(lambda: player.get(f"/api/recordings/{call.recording_id}/stream?ticket={ticket}",
                                  headers={"Range": "bytes=0-9"}).status_code == 401,
               what="the expired ticket refused")
    assert_error(player.get(f"/api/recordings/{call.recording_id}/stream?ticket={ticket}"), 401, "invalid_ticket")


@pytest.mark.parametrize("ticket", ["", "x" * 200, "not-a-ticket-that-was-issued"])
def test_a_missing_overlong_or_unknown_ticket_is_refused(api, recorded, ticket):
    tenant, _, call = recorded
    player = api.anonymous(tenant.host)
    assert_error(player.get(f"/api/recordings/{call.recording_id}/stream?ticket={ticket}"), 401, "invalid_ticket")


def test_a_ticket_opens_its_own_recording_on_its_own_tenants_host_only(api, seed, recorded, storage):  # noqa: F811
    tenant, admin, call = recorded
    path = _owned(storage, tenant.account_id)
    path.write_bytes(b"other")
    sibling = seed_recorded_call(tenant.account_id, path)
    other, stranger = admin_client(api, seed)
    ticket = _ticket(admin, call.recording_id)["ticket"]

    assert_error(api.anonymous(tenant.host).get(f"/api/recordings/{sibling.recording_id}/stream?ticket={ticket}"),
                 401, "invalid_ticket")
    assert_error(api.anonymous(other.host).get(f"/api/recordings/{call.recording_id}/stream?ticket={ticket}"),
                 401, "invalid_ticket")
    # another tenant cannot even ask for a ticket to this recording
    assert_error(stranger.post(f"/api/recordings/{call.recording_id}/tickets"), 404, "recording_not_found")


def test_asking_for_a_ticket_needs_the_recordings_view_permission(api, seed, recorded):
    tenant, _, call = recorded
    seed.user(tenant, "plain", role="agent")
    assert_error(api.login(tenant, "plain").post(f"/api/recordings/{call.recording_id}/tickets"),
                 403, "permission_denied")
    assert_error(api.anonymous(tenant.host).post(f"/api/recordings/{call.recording_id}/tickets"),
                 401, "missing_token")


def test_a_ticket_for_a_recording_whose_file_is_gone_gets_404(api, seed, storage):  # noqa: F811
    tenant, admin = admin_client(api, seed)
    gone = seed_recorded_call(tenant.account_id, _owned(storage, tenant.account_id))
    ticket = _ticket(admin, gone.recording_id)["ticket"]
    assert_error(api.anonymous(tenant.host).get(f"/api/recordings/{gone.recording_id}/stream?ticket={ticket}"),
                 404, "recording_audio_not_found")
