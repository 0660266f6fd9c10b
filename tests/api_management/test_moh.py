"""/api/moh: an account's uploaded hold music (issue 27 item 4), through the real Flask app,
with the files on disk under a fresh moh.dir; and MusicLibrary.source resolving a queue's moh
to the caller's own upload only."""
from __future__ import annotations

import io
import uuid
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from app import limits
from app.config import get_config, set_value
from app.media.moh import MusicLibrary
from tests.api_management.helpers import admin_client, assert_error, cases

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "moh"
WAV = (FIXTURES / "tone-660hz-16k-stereo.wav").read_bytes()   # 1.5 s, 16 kHz stereo
MP3 = (FIXTURES / "tone-440hz-22k.mp3").read_bytes()          # 1.5 s, 22.05 kHz mono
NOT_AUDIO = (FIXTURES / "not-audio.wav").read_bytes()          # a RIFF header, then junk


@pytest.fixture
def moh_dir(tmp_path) -> Path:
    root = tmp_path / "moh"
    set_value("moh.dir", str(root), announce=False)
    get_config().reload()
    return root


def _upload(client, name: str, body: bytes, content_type: str):
    return client.put(f"/api/moh/{name}", data=body, headers={"Content-Type": content_type})


def _chunked(client, name: str, body: bytes):
    """As a server hands a chunked body over: no Content-Length (gevent decodes the chunks)."""
    return client.put(f"/api/moh/{name}", input_stream=io.BytesIO(body),
                      headers={"Content-Type": "audio/wav", "Transfer-Encoding": "chunked"},
                      environ_overrides={"CONTENT_LENGTH": ""})


def _dominant_hz(samples: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples))
    return float(np.fft.rfftfreq(len(samples), 1 / rate)[spectrum.argmax()])


@pytest.mark.parametrize(("fixture", "content_type", "hz"), [
    (WAV, "audio/wav", 660), (MP3, "audio/mpeg", 440)], ids=["wav", "mp3"])
def test_an_uploaded_wav_or_mp3_is_stored_as_8khz_mono_16bit_wav_in_the_accounts_folder(
        api, seed, moh_dir, fixture, content_type, hz):
    tenant, admin = admin_client(api, seed)

    response = _upload(admin, "lobby", fixture, content_type)

    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    stored = moh_dir / str(tenant.account_id) / "lobby.wav"
    info = sf.info(str(stored))
    assert (info.samplerate, info.channels, info.subtype, info.format) == (8000, 1, "PCM_16", "WAV")
    assert abs(info.duration - 1.5) < 0.06, info.duration  # an MP3 decoder may pad a frame
    assert (body["name"], body["size_bytes"]) == ("lobby", stored.stat().st_size)
    assert abs(body["duration_ms"] - 1500) < 60
    samples, rate = sf.read(str(stored))
    assert abs(_dominant_hz(samples, rate) - hz) < 5  # the upload's own tone, converted
    assert [p.name for p in stored.parent.iterdir()] == ["lobby.wav"]  # no temporary file left
    assert admin.get("/api/moh").get_json()["items"] == [body]


def test_uploading_a_name_again_replaces_the_file_with_200(api, seed, moh_dir):
    tenant, admin = admin_client(api, seed)
    assert _upload(admin, "lobby", WAV, "audio/wav").status_code == 201

    again = _upload(admin, "lobby", MP3, "audio/mpeg")

    assert again.status_code == 200, again.get_json()
    samples, rate = sf.read(str(moh_dir / str(tenant.account_id) / "lobby.wav"))
    assert abs(_dominant_hz(samples, rate) - 440) < 5
    assert [m["name"] for m in admin.get("/api/moh").get_json()["items"]] == ["lobby"]


@pytest.mark.parametrize("body", [NOT_AUDIO, b"ID3" + bytes(5000), b"\x00" * 2048],
                         ids=["riff-junk", "id3-junk", "zeros"])
def test_a_body_that_does_not_decode_is_422_invalid_audio_and_nothing_is_stored(api, seed, moh_dir, body):
    _, admin = admin_client(api, seed)
    assert_error(_upload(admin, "lobby", body, "audio/wav"), 422, "invalid_audio")
    assert admin.get("/api/moh").get_json()["items"] == []


def test_other_audio_formats_and_too_short_audio_are_422_invalid_audio(api, seed, moh_dir):
    _, admin = admin_client(api, seed)
    flac, short = io.BytesIO(), io.BytesIO()
    sf.write(flac, np.zeros(16000), 8000, format="FLAC")
    sf.write(short, np.zeros(4000), 8000, format="WAV")  # 0.5 s
    assert_error(_upload(admin, "a", flac.getvalue(), "audio/wav"), 422, "invalid_audio")
    assert_error(_upload(admin, "b", short.getvalue(), "audio/wav"), 422, "invalid_audio")
    assert_error(_upload(admin, "c", b"", "audio/wav"), 422, "invalid_audio")


def test_audio_longer_than_the_limit_is_422_audio_too_long(api, seed, moh_dir):
    _, admin = admin_client(api, seed)
    long_wav = io.BytesIO()  # 4 kHz 8-bit: 16 minutes in 3.8 MB, under the byte limit
    sf.write(long_wav, np.zeros((limits.MOH_UPLOAD_MAX_SECONDS + 60) * 4000), 4000, format="WAV", subtype="PCM_U8")
    assert len(long_wav.getvalue()) < limits.MOH_UPLOAD_MAX_BYTES
    assert_error(_upload(admin, "long", long_wav.getvalue(), "audio/wav"), 422, "audio_too_long")


def test_a_body_over_the_upload_limit_is_413_but_a_json_body_keeps_the_json_limit(api, seed, moh_dir):
    _, admin = admin_client(api, seed)
    big = WAV + bytes(limits.MOH_UPLOAD_MAX_BYTES)
    assert_error(_upload(admin, "big", big, "audio/wav"), 413, "payload_too_large")
    # chunked (no Content-Length): the same cap (app/api/body_limit.py)
    assert_error(_chunked(admin, "big", big), 413, "payload_too_large")
    within = _chunked(admin, "small", WAV)
    assert within.status_code == 201, within.get_json()
    # a body above the JSON cap (1 MiB) but within the upload cap is an upload, not a 413
    padded = io.BytesIO()
    sf.write(padded, np.zeros(8000 * 70), 8000, format="WAV", subtype="PCM_16")  # 1.1 MB
    assert _upload(admin, "padded", padded.getvalue(), "audio/wav").status_code == 201
    # the exemption is this route's only: the same body to a JSON route stays refused
    assert admin.put("/api/moh/other", data=padded.getvalue(),
                     headers={"Content-Type": "application/json"}).status_code == 413
    assert admin.post("/api/queues", data=padded.getvalue(),
                      headers={"Content-Type": "audio/wav"}).status_code in (413, 415)


@pytest.mark.parametrize("content_type", ["text/plain", "application/octet-stream", "audio/ogg",
                                          "multipart/form-data; boundary=x", "application/json"])
def test_a_wrong_content_type_is_415(api, seed, moh_dir, content_type):
    _, admin = admin_client(api, seed)
    body = b'{"a": 1}' if content_type == "application/json" else WAV
    assert_error(_upload(admin, "lobby", body, content_type), 415, "unsupported_media_type")


def test_audio_content_types_are_refused_on_every_other_route(api, seed, moh_dir):
    _, admin = admin_client(api, seed)
    assert_error(admin.post("/api/queues", data=WAV, headers={"Content-Type": "audio/wav"}),
                 415, "unsupported_media_type")
    # the exemption is PUT's only: another method on the same path gets the JSON guard's 415
    assert_error(admin.post("/api/moh/lobby", data=WAV, headers={"Content-Type": "audio/wav"}),
                 415, "unsupported_media_type")


@pytest.mark.parametrize("name", ["default", ".hidden", "a" * 65, "sp ace", "semi;colon"])
def test_an_unusable_name_is_422_invalid_moh_name(api, seed, moh_dir, name):
    _, admin = admin_client(api, seed)
    assert_error(_upload(admin, name, WAV, "audio/wav"), 422, "invalid_moh_name")


def test_delete_removes_the_file_and_a_second_delete_is_404(api, seed, moh_dir):
    tenant, admin = admin_client(api, seed)
    _upload(admin, "lobby", WAV, "audio/wav")

    assert admin.delete("/api/moh/lobby").status_code == 204

    assert not (moh_dir / str(tenant.account_id) / "lobby.wav").exists()
    assert admin.get("/api/moh").get_json()["items"] == []
    assert_error(admin.delete("/api/moh/lobby"), 404, "moh_not_found")


def test_another_tenant_neither_lists_nor_deletes_nor_replaces_an_accounts_music(api, seed, moh_dir):
    tenant, admin = admin_client(api, seed)
    other, stranger = admin_client(api, seed)
    _upload(admin, "lobby", WAV, "audio/wav")

    assert stranger.get("/api/moh").get_json()["items"] == []
    assert_error(stranger.delete("/api/moh/lobby"), 404, "moh_not_found")
    assert _upload(stranger, "lobby", MP3, "audio/mpeg").status_code == 201  # its own folder

    mine, rate = sf.read(str(moh_dir / str(tenant.account_id) / "lobby.wav"))
    assert abs(_dominant_hz(mine, rate) - 660) < 5
    assert (moh_dir / str(other.account_id) / "lobby.wav").is_file()


def test_an_account_keeps_at_most_the_file_limit(api, seed, moh_dir):
    _, admin = admin_client(api, seed)
    for k in range(limits.MOH_MAX_FILES_PER_ACCOUNT):
        assert _upload(admin, f"m{k}", MP3, "audio/mpeg").status_code == 201
    assert_error(_upload(admin, "one-more", MP3, "audio/mpeg"), 409, "moh_limit_reached")
    assert _upload(admin, "m0", WAV, "audio/wav").status_code == 200  # replacing is not adding


def test_moh_needs_an_admin_session_and_the_queue_license(api, seed, moh_dir):
    _, admin = admin_client(api, seed, licenses=[])
    assert _upload(admin, "lobby", WAV, "audio/wav").status_code == 403
    assert api.anonymous("acme.localhost").put("/api/moh/lobby", data=WAV,
                                               headers={"Content-Type": "audio/wav"}).status_code == 401


# --- a queue's moh must name music that plays ---------------------------------------------------

@pytest.mark.parametrize("case", cases("queues_moh_good.json"))
def test_a_queue_may_name_a_built_in_music_or_an_upload_of_its_own_account(api, seed, moh_dir, case):
    _, admin = admin_client(api, seed)
    assert _upload(admin, "lobby", WAV, "audio/wav").status_code == 201

    created = admin.post("/api/queues", json={"name": "sales", "moh": case["moh"]})

    assert created.status_code == 201, created.get_json()
    assert created.get_json()["moh"] == case["moh"]
    patched = admin.patch(f"/api/queues/{created.get_json()['id']}", json={"moh": case["moh"]})
    assert patched.status_code == 200 and patched.get_json()["moh"] == case["moh"]


@pytest.mark.parametrize("case", cases("queues_moh_bad.json"))
def test_a_queue_naming_music_that_does_not_exist_is_422_and_not_saved(api, seed, moh_dir, case):
    """Created or patched: refused with a code (``unknown_moh`` names the built-ins); another
    tenant's upload called ``theirs`` exists, but not for this account."""
    other, other_admin = admin_client(api, seed)
    assert _upload(other_admin, "theirs", WAV, "audio/wav").status_code == 201
    _, admin = admin_client(api, seed)
    assert _upload(admin, "lobby", WAV, "audio/wav").status_code == 201

    body = assert_error(admin.post("/api/queues", json={"name": "sales", "moh": case["moh"]}), 422, case["code"])
    if case["code"] == "unknown_moh":
        assert body["details"] == {"moh": case["moh"], "built_in": ["default", "moh"]}
    queue = admin.post("/api/queues", json={"name": "support", "moh": "lobby"}).get_json()
    assert_error(admin.patch(f"/api/queues/{queue['id']}", json={"moh": case["moh"]}), 422, case["code"])
    assert [q["moh"] for q in admin.get("/api/queues").get_json()["items"]] == ["lobby"]


def test_hold_music_a_queue_plays_cannot_be_deleted_until_the_queue_names_another(api, seed, moh_dir):
    tenant, admin = admin_client(api, seed)
    assert _upload(admin, "lobby", WAV, "audio/wav").status_code == 201
    queue = admin.post("/api/queues", json={"name": "support", "moh": "lobby"}).get_json()
    _, other = admin_client(api, seed)  # another tenant's queue of that moh does not count
    assert _upload(other, "lobby", WAV, "audio/wav").status_code == 201

    body = assert_error(admin.delete("/api/moh/lobby"), 409, "moh_in_use")

    assert body["details"] == {"queues": ["support"], "campaigns": []}
    assert (moh_dir / str(tenant.account_id) / "lobby.wav").is_file()
    assert other.delete("/api/moh/lobby").status_code == 204
    admin.patch(f"/api/queues/{queue['id']}", json={"moh": "default"})
    assert admin.delete("/api/moh/lobby").status_code == 204


def test_an_upload_a_campaign_leaves_on_answering_machines_is_only_the_accounts_own_and_cannot_be_deleted_while_named(
        api, seed, moh_dir):
    """A campaign's ``amd_message`` ``{"audio": name}`` names a file the account uploaded: another
    account's file of that name does not count (422 ``unknown_audio``), and the file cannot be
    deleted while a campaign names it (409 ``moh_in_use``), as for a queue's moh."""
    tenant, admin = admin_client(api, seed)
    _, other = admin_client(api, seed)
    assert _upload(other, "renewal-drop", WAV, "audio/wav").status_code == 201
    message = {"audio": "renewal-drop"}

    body = assert_error(admin.post("/api/campaigns", json={"name": "c", "amd": "message", "amd_message": message}),
                        422, "unknown_audio")
    assert body["details"] == {"amd_message": ["No uploaded audio called 'renewal-drop'."]}
    for bad in ({"audio": "renewal-drop", "verb": "say"}, {"audio": 7}):
        assert_error(admin.post("/api/campaigns", json={"name": "c", "amd": "message", "amd_message": bad}),
                     422, "invalid_amd_message")
    assert _upload(admin, "renewal-drop", WAV, "audio/wav").status_code == 201
    created = admin.post("/api/campaigns", json={"name": "renewals", "amd": "message", "amd_message": message})
    assert created.status_code == 201, created.get_json()
    assert created.get_json()["amd_message"] == message

    body = assert_error(admin.delete("/api/moh/renewal-drop"), 409, "moh_in_use")
    assert body["details"] == {"queues": [], "campaigns": ["renewals"]}
    assert other.delete("/api/moh/renewal-drop").status_code == 204  # the other account's own file
    said = {"verb": "say", "text": "Please call Acme back."}
    assert admin.patch(f"/api/campaigns/{created.get_json()['id']}", json={"amd_message": said}).status_code == 200
    assert admin.delete("/api/moh/renewal-drop").status_code == 204


def test_an_uploaded_file_is_found_for_its_own_account_only(moh_dir):
    library = MusicLibrary(str(moh_dir))
    mine, theirs = str(uuid.uuid4()), str(uuid.uuid4())
    (moh_dir / mine).mkdir(parents=True)
    sf.write(str(moh_dir / mine / "drop.wav"), np.zeros(8000, dtype=np.int16), 8000, subtype="PCM_16")

    assert library.uploaded(mine, "drop") == str(moh_dir / mine / "drop.wav")
    assert library.uploaded(theirs, "drop") is None
    assert library.uploaded(mine, "../" + mine + "/drop") is None and library.uploaded(mine, "default") is None


# --- MusicLibrary.source: a queue's moh -------------------------------------------------------

def _music_file(moh_dir: Path, account: uuid.UUID, name: str) -> Path:
    path = moh_dir / str(account) / f"{name}.wav"
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), np.zeros(8000), 8000, subtype="PCM_16")
    return path


def test_a_queues_moh_naming_an_upload_resolves_to_the_callers_own_file_only(tmp_path):
    library = MusicLibrary(str(tmp_path))
    mine, theirs = uuid.uuid4(), uuid.uuid4()
    lobby = _music_file(tmp_path, mine, "lobby")
    _music_file(tmp_path, theirs, "jazz")

    assert library.source(str(mine), "lobby") == str(lobby)
    assert library.source(mine, "lobby") == str(lobby)  # a UUID as well as its text
    assert library.source(str(theirs), "lobby") == "local_stream://lobby"  # never another's
    assert library.source(str(mine), "jazz") == "local_stream://jazz"
    assert library.source(str(mine), f"../{theirs}/jazz") == f"local_stream://../{theirs}/jazz"
    assert library.source(str(mine), "default") == str(library.default_file)
    assert library.source("not-an-account", "lobby") == "local_stream://lobby"


def test_a_moh_dir_that_cannot_be_written_is_503_moh_storage_unavailable(api, seed, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    set_value("moh.dir", str(blocked), announce=False)  # every path under it fails (ENOTDIR)
    get_config().reload()
    _, admin = admin_client(api, seed)
    assert_error(_upload(admin, "lobby", WAV, "audio/wav"), 503, "moh_storage_unavailable")
