"""The web console's first page: how much JavaScript the browser downloads (figures, not
pass/fail; issue 22's goal is at most 250 KB gzipped).

Asks ``sbc api``'s application (Flask's test client, no server or database needed) for
``/console/`` as a browser does, then for every script and module preload the page names, with
``Accept-Encoding: gzip``: the bytes counted are the bytes the API sends (it gzips the console's
assets itself). Chunks loaded later (a screen opened afterwards, e.g. Call records) are listed
apart: they are not part of the first page.

Run after the build (bash scripts/install): .venv/bin/python benchmarks/console_bench.py
"""
from __future__ import annotations

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from app.api.console import ASSETS_DIR, STATIC_DIR  # noqa: E402

GOAL_KB = 250


def main() -> int:
    if not (STATIC_DIR / "index.html").is_file():
        print("the console is not built: run bash scripts/install", file=sys.stderr)
        return 1
    from app.api.app import create_app

    client = create_app({"TESTING": True}, bind_host="127.0.0.1").test_client()  # never listens
    page = client.get("/console/", headers={"Host": "acme.localhost"})
    html = page.get_data(as_text=True)
    first = re.findall(r'<(?:script[^>]*src|link[^>]*rel="modulepreload"[^>]*href)="/console/assets/([\w.-]+\.js)"', html)
    later = sorted({p.name for p in ASSETS_DIR.glob("*.js")} - set(first))
    print(f"first page (/console/, the sign-in or the Phone numbers screen): {len(first)} script(s)")
    total_gz = total_raw = 0
    for name in first:
        answer = client.get(f"/console/assets/{name}", headers={"Accept-Encoding": "gzip"})
        assert answer.status_code == 200 and answer.headers.get("Content-Encoding") == "gzip", name
        raw = (ASSETS_DIR / name).stat().st_size
        total_gz += len(answer.data)
        total_raw += raw
        print(f"  {name}: {len(answer.data) / 1024:.1f} KB gzipped ({raw / 1024:.1f} KB)")
    print(f"JS shipped for the first page: {total_gz / 1024:.1f} KB gzipped ({total_raw / 1024:.1f} KB raw); "
          f"goal <= {GOAL_KB} KB gzipped: {'met' if total_gz <= GOAL_KB * 1024 else 'NOT met'}")
    for name in later:
        answer = client.get(f"/console/assets/{name}", headers={"Accept-Encoding": "gzip"})
        print(f"  later, when its screen opens: {name}: {len(answer.data) / 1024:.1f} KB gzipped")
    print(f"HTML: {len(html)} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
