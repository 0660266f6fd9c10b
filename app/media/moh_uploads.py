"""An account's uploaded hold music: checked, converted and stored under ``<moh.dir>/<account>/``.

Why converted on upload: FreeSWITCH plays an 8 kHz mono 16-bit WAV on a G.711 call without
resampling or decoding at play time, and a file that does not decode is refused to the
uploader (422 ``invalid_audio``) instead of becoming dead air for a queued caller later.

Tenant isolation is by path alone: every name is resolved under the caller's own account
folder (``<moh.dir>/<account uuid>/<name>.wav``), and a name can hold no ``/`` and cannot
start with ``.``, so it never leaves that folder. No table: the folder is the list (``moh.dir``
is shared by the API and the switches, like ``recording.dir``).
"""
from __future__ import annotations

import io
import logging
import os
import re
import tempfile
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Optional, Union

import numpy as np
import soundfile as sf
import soxr

from app import limits
from app.errors import Conflict, NotFound, ServiceUnavailable, ValidationFailed

log = logging.getLogger(__name__)

RATE = 8000
# An uploaded file's name: letters, digits, '_', '.', '-', not starting with '.' (no hidden or
# temporary file, no '..'), no '/' (never outside the account's folder)
NAME_PATTERN = r"^[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,63}$"
_NAME = re.compile(NAME_PATTERN)
RESERVED_NAMES = frozenset({"default"})  # the shipped music (app/media/moh.py)
_SUFFIX = ".wav"
# a sample rate outside this range is not audio anyone can hear on a phone (or a broken header)
_MIN_RATE, _MAX_RATE = 4000, 384_000
_BLOCK_FRAMES = 65536
_FORMATS = frozenset({"WAV", "WAVEX", "RF64", "MP3", "MPEG"})  # libsndfile's names

AccountId = Union[str, uuid.UUID]


@dataclass(frozen=True)
class StoredMusic:
    name: str
    size_bytes: int
    duration_ms: int
    updated_at: datetime


def valid_name(name: str) -> bool:
    return bool(_NAME.match(name)) and name not in RESERVED_NAMES


def account_dir(moh_dir: str, account_id: AccountId) -> Optional[Path]:
    """The account's folder; None when ``account_id`` is not a UUID (never a path of its own)."""
    try:
        folder = str(uuid.UUID(str(account_id)))
    except ValueError:
        return None
    return Path(moh_dir) / folder


def uploaded_file(moh_dir: str, account_id: AccountId, name: str) -> Optional[Path]:
    """The account's own uploaded file called ``name``, None when it has none by that name."""
    folder = account_dir(moh_dir, account_id)
    if folder is None or not valid_name(name):
        return None
    path = folder / f"{name}{_SUFFIX}"
    return path if path.is_file() else None


def decode(body: bytes) -> np.ndarray:
    """The audio of a WAV or MP3 body as 8 kHz mono int16; ``ValidationFailed`` (422) when it
    does not decode or is longer than ``MOH_UPLOAD_MAX_SECONDS``. Read in blocks and resampled
    as a stream: a small MP3 can decode to a lot of audio, which is refused before it is all
    held in memory."""
    try:
        with sf.SoundFile(io.BytesIO(body)) as audio:
            rate, channels = audio.samplerate, audio.channels
            if audio.format not in _FORMATS:
                raise _invalid(f"{audio.format} is not WAV or MP3")
            if not _MIN_RATE <= rate <= _MAX_RATE or channels < 1:
                raise _invalid(f"unusable sample rate {rate} Hz or {channels} channels")
            stream = soxr.ResampleStream(rate, RATE, 1, dtype="float32")
            out, frames = [], 0
            for block in audio.blocks(blocksize=_BLOCK_FRAMES, dtype="float32", always_2d=True):
                frames += len(block)
                if frames > limits.MOH_UPLOAD_MAX_SECONDS * rate:
                    raise ValidationFailed(
                        f"The audio is longer than {limits.MOH_UPLOAD_MAX_SECONDS} s.",
                        code="audio_too_long", details={"max_seconds": limits.MOH_UPLOAD_MAX_SECONDS})
                out.append(stream.resample_chunk(block.mean(axis=1)))
            out.append(stream.resample_chunk(np.zeros(0, dtype="float32"), last=True))
    except sf.LibsndfileError as exc:
        raise _invalid(exc.error_string[:200]) from exc
    except (RuntimeError, TypeError, ValueError) as exc:
        raise _invalid("undecodable") from exc
    samples = np.concatenate(out) if out else np.zeros(0, dtype="float32")
    if frames < limits.MOH_UPLOAD_MIN_SECONDS * rate:
        raise _invalid(f"shorter than {limits.MOH_UPLOAD_MIN_SECONDS} s")
    if not np.isfinite(samples).all():
        raise _invalid("samples that are not numbers")
    return (np.clip(samples, -1.0, 1.0) * 32767).astype(np.int16)


def _invalid(detail: str) -> ValidationFailed:
    return ValidationFailed("The body is not a WAV or MP3 file that can be decoded.",
                            code="invalid_audio", details={"reason": detail})


def store(moh_dir: str, account_id: AccountId, name: str, body: bytes) -> tuple[StoredMusic, bool]:
    """Decode, convert and write ``body`` as the account's ``name`` (replacing one of that name);
    (the stored file, whether it is new). The file appears whole or not at all (temporary file
    in the same folder, then a rename): a queue never plays a half-written file."""
    folder = _folder(moh_dir, account_id, name)
    samples = decode(body)
    path = folder / f"{name}{_SUFFIX}"
    created = not path.is_file()
    if created and len(_names(folder)) >= limits.MOH_MAX_FILES_PER_ACCOUNT:
        raise Conflict(f"An account keeps at most {limits.MOH_MAX_FILES_PER_ACCOUNT} hold music files; "
                       "delete one first.", code="moh_limit_reached",
                       details={"max_files": limits.MOH_MAX_FILES_PER_ACCOUNT})
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            sf.write(fh, samples, RATE, format="WAV", subtype="PCM_16")
        os.chmod(tmp, 0o644)  # FreeSWITCH (another user) reads it
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return _describe(path), created


def list_music(moh_dir: str, account_id: AccountId) -> list[StoredMusic]:
    folder = account_dir(moh_dir, account_id)
    if folder is None or not folder.is_dir():
        return []
    return [_describe(folder / f"{n}{_SUFFIX}") for n in sorted(_names(folder))]


def delete(moh_dir: str, account_id: AccountId, name: str) -> None:
    path = uploaded_file(moh_dir, account_id, name)
    if path is None:
        raise NotFound("No hold music of that name.", code="moh_not_found")
    path.unlink(missing_ok=True)


@contextmanager
def storage_errors() -> Iterator[None]:
    """A ``moh.dir`` the API cannot read or write (not mounted, full, read-only) is a 503 the
    caller can retry, not a 500."""
    try:
        yield
    except OSError as exc:
        log.warning("hold music storage failed: %s", exc.strerror or type(exc).__name__)
        raise ServiceUnavailable("The hold music storage is not available; try again later.",
                                 code="moh_storage_unavailable") from None


def _folder(moh_dir: str, account_id: AccountId, name: str) -> Path:
    folder = account_dir(moh_dir, account_id)
    if folder is None:
        raise ValueError(f"not an account id: {account_id!r}")
    if not valid_name(name):
        raise ValidationFailed(
            "A hold music name is 1-64 letters, digits, '_', '.', '-', not starting with '.', "
            "and not 'default'.", code="invalid_moh_name", details={"name": name[:100]})
    return folder


def _names(folder: Path) -> list[str]:
    if not folder.is_dir():
        return []
    return [p.name[:-len(_SUFFIX)] for p in folder.iterdir()
            if p.name.endswith(_SUFFIX) and valid_name(p.name[:-len(_SUFFIX)]) and p.is_file()]


def _describe(path: Path) -> StoredMusic:
    stat = path.stat()
    try:
        frames = sf.info(str(path)).frames
    except (sf.LibsndfileError, RuntimeError):
        frames = 0
    return StoredMusic(name=path.name[:-len(_SUFFIX)], size_bytes=stat.st_size,
                       duration_ms=round(frames * 1000 / RATE),
                       updated_at=datetime.fromtimestamp(stat.st_mtime, tz=timezone.utc))
