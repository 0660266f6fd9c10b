"""Shared bits for the webhook tests (fixture files, a rebinding resolver)."""
from __future__ import annotations

import json
from pathlib import Path

from app.webhooks.resolver import StaticResolver

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "webhooks"


def load(name: str):
    return json.loads((FIXTURES / name).read_text())


class RebindingResolver(StaticResolver):
    """Answers each lookup of a name with the next answer in its list: the DNS-rebinding
    attacker's server (first a harmless address, then an internal one)."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        super().__init__({})
        self._answers = {k: list(v) for k, v in answers.items()}

    def resolve(self, host, port):
        import ipaddress
        self.lookups.append(host)
        answers = self._answers[host]
        current = answers.pop(0) if len(answers) > 1 else answers[0]
        return [ipaddress.ip_address(current)]
