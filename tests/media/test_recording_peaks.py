"""``GET /api/recordings/:id/peaks``: the console's waveform, read from the real WAV file through
the real Flask app as the API role (row-level security), cached in real Redis."""
from __future__ import annotations

import io
import time
import uuid

import gevent
import numpy as np
import pytest
import requests
import soundfile

from app import limits
from app.accounts.login_throttle import throttle_client
from app.cli.api import NoDelayWSGIServer
from app.media.storage import recording_file_name
from app.settings import get_settings
from tests.api_management.helpers import admin_client, assert_error
from tests.media.recorded_calls import seed_recorded_call
from tests.media.test_api import _owned, storage  # noqa: F401  (fixture)

RATE = 8000


def _wav(path, left: np.ndarray, right: np.ndarray) -> None:
    soundfile.write(str(path), np.stack([left, right], axis=1).astype(np.int16), RATE, subtype="PCM_16")


def _tone(seconds: float, amplitude: int) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (amplitude * np.sin(2 * np.pi * 440 * t)).astype(np.int16)


def _peaks(client, recording_id) -> dict:
    response = client.get(f"/api/recordings/{recording_id}/peaks")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


@pytest.fixture
def tenant_admin(api, seed):
    return admin_client(api, seed)


def test_peaks_are_200_slices_in_order_loudest_sample_of_either_channel(api, tenant_admin, storage):  # noqa: F811
    tenant, admin = tenant_admin
    path = _owned(storage, tenant.account_id)
    # 4 s: 2 s of silence, then the callee (right channel) at half scale for 2 s
    silence = np.zeros(2 * RATE, dtype=np.int16)
    _wav(path, np.concatenate([silence, silence]), np.concatenate([silence, _tone(2, 16384)]))
    call = seed_recorded_call(tenant.account_id, path, recording_ms=4000)

    body = _peaks(admin, call.recording_id)

    assert body["recording_id"] == str(call.recording_id)
    assert body["duration_seconds"] == 4.0
    assert len(body["peaks"]) == limits.RECORDING_PEAKS == 200
    assert body["peaks"][:100] == [0.0] * 100
    assert all(0.49 <= p <= 0.51 for p in body["peaks"][100:]), body["peaks"][100:]


def test_a_silent_recording_reads_flat(api, tenant_admin, storage):  # noqa: F811
    tenant, admin = tenant_admin
    path = _owned(storage, tenant.account_id)
    silence = np.zeros(3 * RATE, dtype=np.int16)
    _wav(path, silence, silence)
    call = seed_recorded_call(tenant.account_id, path, recording_ms=3000)

    assert _peaks(admin, call.recording_id)["peaks"] == [0.0] * 200


def test_a_recording_shorter_than_200_frames_still_has_200_peaks(api, tenant_admin, storage):  # noqa: F811
    tenant, admin = tenant_admin
    path = _owned(storage, tenant.account_id)
    full = np.full(50, -32768, dtype=np.int16)
    _wav(path, full, full)
    call = seed_recorded_call(tenant.account_id, path, recording_ms=6)

    peaks = _peaks(admin, call.recording_id)["peaks"]
    assert len(peaks) == 200 and sorted(set(peaks)) == [0.0, 1.0] and peaks.count(1.0) == 50


def test_peaks_are_cached_and_another_tenants_recording_is_404_cached_or_not(api, seed, tenant_admin, storage):  # noqa: F811
    tenant, admin = tenant_admin
    _, stranger = admin_client(api, seed)
    path = _owned(storage, tenant.account_id)
    _wav(path, _tone(1, 8192), _tone(1, 8192))
    call = seed_recorded_call(tenant.account_id, path)

    assert_error(stranger.get(f"/api/recordings/{call.recording_id}/peaks"), 404, "recording_not_found")
    first = _peaks(admin, call.recording_id)
    redis = throttle_client(get_settings().redis_url)
    keys = redis.keys(f"{get_settings().redis_key_prefix}recording-peaks:{call.recording_id}:*")
    assert len(keys) == 1 and 0 < redis.ttl(keys[0]) <= limits.RECORDING_PEAKS_CACHE_SECONDS
    assert _peaks(admin, call.recording_id) == first
    assert_error(stranger.get(f"/api/recordings/{call.recording_id}/peaks"), 404, "recording_not_found")


def test_peaks_of_a_gone_or_unreadable_file_are_refused_in_words(api, seed, tenant_admin, storage):  # noqa: F811
    tenant, admin = tenant_admin
    gone = seed_recorded_call(tenant.account_id, _owned(storage, tenant.account_id))
    garbage = _owned(storage, tenant.account_id)
    garbage.write_bytes(b"RIFF" + bytes(2000))
    unreadable = seed_recorded_call(tenant.account_id, garbage)
    seed.user(tenant, "plain", role="agent")

    assert_error(admin.get(f"/api/recordings/{gone.recording_id}/peaks"), 404, "recording_audio_not_found")
    refused = assert_error(admin.get(f"/api/recordings/{unreadable.recording_id}/peaks"), 422,
                           "recording_audio_unreadable")
    assert_error(api.login(tenant, "plain").get(f"/api/recordings/{unreadable.recording_id}/peaks"),
                 403, "permission_denied")
    assert refused["details"] == {"reason": "unreadable"}


def _long_mp3(path, hours: float) -> None:
    """An MP3 call of ``hours`` (decoding it is the slow part of reading its peaks): 20 s of
    constant-bitrate tone encoded once, its frames repeated (LAME's header frame left out, so the
    length is read from the file's size)."""
    tone = _tone(20, 8000)
    encoded = io.BytesIO()
    soundfile.write(encoded, np.stack([tone, tone], axis=1), RATE, format="MP3", bitrate_mode="CONSTANT")
    data = encoded.getvalue()
    second_frame = next(i for i in range(1, len(data) - 1) if data[i] == 0xFF and data[i + 1] & 0xE0 == 0xE0)
    path.write_bytes(data[second_frame:] * int(hours * 3600 / 20))


def test_while_a_long_recordings_peaks_are_read_other_requests_are_answered(api, api_app, tenant_admin,
                                                                            storage):  # noqa: F811
    tenant, admin = tenant_admin
    path = storage / recording_file_name(tenant.account_id, uuid.uuid4(), "mp3")
    _long_mp3(path, hours=2)
    call = seed_recorded_call(tenant.account_id, path, recording_ms=2 * 3600 * 1000)
    server = NoDelayWSGIServer(("127.0.0.1", 0), api_app, log=None)
    server.start()
    base, headers = f"http://127.0.0.1:{server.server_port}", {"Host": tenant.host,
                                                                "Authorization": f"Bearer {admin.token}"}

    def timed(url: str) -> tuple[float, requests.Response]:
        started = time.monotonic()
        response = requests.get(base + url, headers=headers, timeout=60)
        return time.monotonic() - started, response

    try:
        reading = gevent.spawn(timed, f"/api/recordings/{call.recording_id}/peaks")
        others = []
        while not reading.ready():  # one request after another for as long as the peaks are read
            others.append(timed(f"/api/recordings/{call.recording_id}"))
        peaks_seconds, peaks = reading.get()
    finally:
        server.stop(timeout=2)

    assert peaks.status_code == 200 and peaks.json()["duration_seconds"] > 3600, peaks.text
    assert all(response.status_code == 200 for _, response in others)
    slowest = max(seconds for seconds, _ in others)
    # the file takes a second or two to decode here; the other requests took well under 0.1 s each
    assert peaks_seconds > 0.3 and len(others) >= 5 and slowest < peaks_seconds / 5, (
        peaks_seconds, len(others), slowest)
