"""``ctx.contact`` for verb tests that dial ``user`` targets: an account directory holding the
given SIP users (production: app.contact.distribution.ContactCentre over the database)."""
from __future__ import annotations

from typing import Optional

from app.contact.directory import DirectoryEntry


class DirectoryContact:
    def __init__(self, *usernames: str, domain: str = "acme") -> None:
        self.usernames = set(usernames)
        self.domain = domain
        self.asked: list[tuple[str, str]] = []

    def directory_user(self, account_id: str, username: str) -> Optional[DirectoryEntry]:
        self.asked.append((account_id, username))
        if username not in self.usernames:
            return None
        return DirectoryEntry(f"agent-{username}", username, self.domain)
