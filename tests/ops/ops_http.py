"""One GET of an ops endpoint (/healthz, /readyz) on loopback: (status, JSON body), a 503
read like a 200 since its body says which check fails."""
from __future__ import annotations

import json
import urllib.error
import urllib.request


def get_json(port: int, path: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read())
