"""/api/recordings/:id, /audio (HTTP Range), and a call record's /recordings and /transcript,
through the real Flask app as the API role (row-level security applies)."""
from __future__ import annotations

import uuid

import pytest

from app.config import get_config, set_value
from app.db.engine import platform_session
from app.media.storage import recording_file_name
from app.models import CallRecord
from tests.api_management.helpers import admin_client, assert_error
from tests.media.recorded_calls import seed_recorded_call


@pytest.fixture
def storage(tmp_path):
    """recording.dir points at a fresh directory for the API process."""
    root = tmp_path / "rec"
    root.mkdir()
    set_value("recording.dir", str(root), announce=False)
    get_config().reload()
    return root


def _owned(storage, account_id):
    """A path where FreeSWITCH writes the account's recordings (app.media.storage's naming)."""
    return storage / recording_file_name(account_id, uuid.uuid4(), "wav")




def test_recording_metadata_is_served_to_its_tenant_only(api, seed, storage):
    tenant, admin = admin_client(api, seed)
    other, stranger = admin_client(api, seed)
    path = _owned(storage, tenant.account_id)
    path.write_bytes(b"RIFF" + bytes(2000))
    call = seed_recorded_call(tenant.account_id, path)

    body = admin.get(f"/api/recordings/{call.recording_id}").get_json()

    assert body["id"] == str(call.recording_id) and body["call_id"] == str(call.call_id)
    assert (body["format"], body["stereo"], body["status"]) == ("wav", True, "transcribed")
    assert body["audio_url"] == f"/api/recordings/{call.recording_id}/audio"
    assert "path" not in body
    assert_error(stranger.get(f"/api/recordings/{call.recording_id}"), 404, "recording_not_found")
    assert_error(stranger.get(f"/api/recordings/{call.recording_id}/audio"), 404, "recording_not_found")


def test_audio_is_streamed_whole_or_by_range(api, seed, storage):
    tenant, admin = admin_client(api, seed)
    content = bytes(range(256)) * 40
    path = _owned(storage, tenant.account_id)
    path.write_bytes(content)
    call = seed_recorded_call(tenant.account_id, path)

    whole = admin.get(f"/api/recordings/{call.recording_id}/audio")
    part = admin.get(f"/api/recordings/{call.recording_id}/audio", headers={"Range": "bytes=100-199"})
    tail = admin.get(f"/api/recordings/{call.recording_id}/audio", headers={"Range": "bytes=-10"})

    assert whole.status_code == 200 and whole.data == content
    assert whole.mimetype == "audio/wav" and whole.headers["Accept-Ranges"] == "bytes"
    assert part.status_code == 206 and part.data == content[100:200]
    assert part.headers["Content-Range"] == f"bytes 100-199/{len(content)}"
    assert tail.status_code == 206 and tail.data == content[-10:]
    unsatisfiable = admin.get(f"/api/recordings/{call.recording_id}/audio",
                              headers={"Range": f"bytes={len(content) + 10}-"})
    assert unsatisfiable.status_code == 416


def test_audio_outside_the_recording_directory_or_gone_is_404(api, seed, storage, tmp_path):
    tenant, admin = admin_client(api, seed)
    outside = tmp_path / recording_file_name(tenant.account_id, uuid.uuid4(), "wav")
    outside.write_bytes(b"secret")
    gone = seed_recorded_call(tenant.account_id, _owned(storage, tenant.account_id))
    elsewhere = seed_recorded_call(tenant.account_id, outside)

    for call in (gone, elsewhere):
        assert_error(admin.get(f"/api/recordings/{call.recording_id}/audio"), 404,
                     "recording_audio_not_found")


def test_call_record_lists_its_recordings_and_serves_its_transcript(api, seed, storage):
    tenant, admin = admin_client(api, seed)
    path = _owned(storage, tenant.account_id)
    path.write_bytes(b"RIFF")
    call = seed_recorded_call(tenant.account_id, path)

    listing = admin.get(f"/api/call-records/{call.public_id}/recordings").get_json()
    transcript = admin.get(f"/api/call-records/{call.public_id}/transcript").get_json()

    assert [r["id"] for r in listing["items"]] == [str(call.recording_id)]
    assert [(s["speaker"], s["text"]) for s in transcript["segments"]] == [
        ("caller", "This is terrible."), ("callee", "Happy to help.")]
    assert transcript["sentiment_label"] == "negative" and transcript["engine"] == "whisper"


def test_call_without_transcript_answers_404_transcript_not_found(api, seed, storage):
    tenant, admin = admin_client(api, seed)
    call = seed_recorded_call(tenant.account_id, _owned(storage, tenant.account_id), transcript=False)
    assert_error(admin.get(f"/api/call-records/{call.public_id}/transcript"), 404, "transcript_not_found")
    assert_error(admin.get(f"/api/call-records/{uuid.uuid4()}/transcript"), 404, "call_record_not_found")


def test_recordings_need_the_recordings_view_permission(api, seed, storage):
    tenant = seed.tenant()
    path = _owned(storage, tenant.account_id)
    path.write_bytes(b"RIFF")
    call = seed_recorded_call(tenant.account_id, path)
    seed.user(tenant, "plain", role="agent")
    plain = api.login(tenant, "plain")
    for url in (f"/api/recordings/{call.recording_id}", f"/api/recordings/{call.recording_id}/audio",
                f"/api/call-records/{call.public_id}/recordings",
                f"/api/call-records/{call.public_id}/transcript"):
        assert_error(plain.get(url), 403, "permission_denied")


def test_csv_export_carries_the_pipelines_sentiment_and_recording_url(api, seed, storage):
    import csv
    import io

    tenant, admin = admin_client(api, seed)
    path = _owned(storage, tenant.account_id)
    path.write_bytes(b"RIFF")
    call = seed_recorded_call(tenant.account_id, path)
    with platform_session() as s:  # what the pipeline's final transaction writes
        s.query(CallRecord).filter_by(call_id=call.call_id).update(
            {"sentiment_score": -0.4125, "sentiment_label": "negative", "has_transcript": True,
             "has_recording": True, "recording_url": f"/api/recordings/{call.recording_id}"})

    rows = list(csv.reader(io.StringIO(admin.get("/api/call-records/export").get_data(as_text=True))))
    cell = dict(zip(rows[0], rows[1]))

    assert cell["Sentiment"] == "negative (-0.4125)"
    assert cell["Recording"] == f"/api/recordings/{call.recording_id}"
    detail = admin.get(f"/api/call-records/{call.public_id}").get_json()
    assert detail["has_transcript"] is True and detail["sentiment_label"] == "negative"


def test_audio_of_another_accounts_file_is_404_even_when_the_row_names_it(api, seed, storage):
    """A row's path is only trusted for a file of the row's own account: a crafted or corrupted
    path naming another tenant's recording (inside recording.dir) serves nothing."""
    tenant, admin = admin_client(api, seed)
    other, _stranger = admin_client(api, seed)
    theirs = _owned(storage, other.account_id)
    theirs.write_bytes(b"RIFF" + b"their call" * 100)
    nested = storage / f"{tenant.account_id}_dir"
    nested.mkdir()
    (nested / theirs.name).write_bytes(b"RIFF" + b"their call" * 100)
    mine = _owned(storage, tenant.account_id)
    mine.write_bytes(b"RIFF" + b"my call" * 100)

    foreign = seed_recorded_call(tenant.account_id, theirs)
    subdirectory = seed_recorded_call(tenant.account_id, nested / theirs.name)
    own = seed_recorded_call(tenant.account_id, mine)

    for call in (foreign, subdirectory):
        assert_error(admin.get(f"/api/recordings/{call.recording_id}/audio"), 404,
                     "recording_audio_not_found")
    assert admin.get(f"/api/recordings/{own.recording_id}/audio").data == mine.read_bytes()


@pytest.mark.parametrize("header", ["bytes=-999999", "items=0-9", "bytes=0-9,20-29", "bytes=0-0,-1",
                                    "Bytes 0-9"],
                         ids=["suffix_longer_than_file", "unknown_unit", "two_ranges", "range_and_suffix",
                              "no_equals"])
def test_audio_range_rfc9110_asks_to_ignore_gets_200_and_the_whole_file(api, seed, storage, header):
    tenant, admin = admin_client(api, seed)
    content = bytes(range(256)) * 40
    path = _owned(storage, tenant.account_id)
    path.write_bytes(content)
    call = seed_recorded_call(tenant.account_id, path)

    response = admin.get(f"/api/recordings/{call.recording_id}/audio", headers={"Range": header})

    assert response.status_code == 200, response.get_json()
    assert response.data == content and "Content-Range" not in response.headers
