"""Where recording files live, and whose they are.

FreeSWITCH writes every recording into one flat directory (``recording.dir``), one file per
recording named ``<account id>_<call id>_<8 hex>.<fmt>`` (``app.verbs.recording``): flat, so the
switch needs no mkdir, and the owner is in the name. Ids are uuids: no path character can come
from a customer. The API serves a recording's audio only when its row's path is such a file of
the row's own account: a crafted or corrupted ``path`` cannot reach another tenant's file, even
inside ``recording.dir``.
"""
from __future__ import annotations

import os
import posixpath
import uuid
from typing import Optional


def recording_file_name(account_id: uuid.UUID | str, call_id: uuid.UUID | str, fmt: str) -> str:
    """A new recording's file name (unique per recording)."""
    return f"{account_id}_{call_id}_{uuid.uuid4().hex[:8]}.{fmt}"


def recording_file_path(recording_dir: str, account_id: uuid.UUID | str, call_id: uuid.UUID | str,
                        fmt: str) -> str:
    return posixpath.join(recording_dir, recording_file_name(account_id, call_id, fmt))


def account_recording_file(path: str, recording_dir: str, account_id: uuid.UUID | str) -> Optional[str]:
    """The real path of ``path`` when it is an existing file directly in ``recording_dir`` named
    for ``account_id``; None otherwise (outside the directory, in a subdirectory, a symlink out,
    another account's file, gone)."""
    root = os.path.realpath(recording_dir)
    real = os.path.realpath(path)
    if os.path.dirname(real) != root or not os.path.basename(real).startswith(f"{account_id}_"):
        return None
    return real if os.path.isfile(real) else None
