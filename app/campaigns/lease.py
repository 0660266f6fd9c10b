"""One pacing loop per running campaign across every dialer instance: a lease in Redis.

``SET key holder NX PX ttl`` takes it; the holder renews it (compare-and-extend, in one Lua
script so a lease that expired and was taken by another instance is never extended by the old
holder) more often than it expires; a holder that dies simply stops renewing, and the lease is
free for another instance ``CAMPAIGN_LEASE_TTL_SECONDS`` later at most. Release is
compare-and-delete for the same reason. The lease only decides *who paces*; that a contact is
never dialled twice at once is guaranteed by the database (app/campaigns/picking.py), so even
two holders during a network partition could not take the same contact.
"""
from __future__ import annotations

import uuid

import redis

from app import limits

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""


class CampaignLeases:
    """The leases one dialer instance (``holder``) holds or tries to take."""

    def __init__(self, client: redis.Redis, prefix: str, holder: str,
                 ttl_seconds: float = limits.CAMPAIGN_LEASE_TTL_SECONDS) -> None:
        self.client, self.prefix, self.holder = client, prefix, holder
        self.ttl_ms = int(ttl_seconds * 1000)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)

    def key(self, campaign_id: uuid.UUID) -> str:
        return f"{self.prefix}campaign:lease:{campaign_id}"

    def acquire(self, campaign_id: uuid.UUID) -> bool:
        """Take the lease if nobody holds it, or keep it if we do (renewed)."""
        if self.client.set(self.key(campaign_id), self.holder, nx=True, px=self.ttl_ms):
            return True
        return self.renew(campaign_id)

    def renew(self, campaign_id: uuid.UUID) -> bool:
        """Extend our lease; False when it expired or is someone else's (stop pacing it)."""
        return bool(self._renew(keys=[self.key(campaign_id)], args=[self.holder, self.ttl_ms]))

    def release(self, campaign_id: uuid.UUID) -> None:
        """Give the lease up now (campaign paused or stopped, instance shutting down)."""
        self._release(keys=[self.key(campaign_id)], args=[self.holder])

    def holder_of(self, campaign_id: uuid.UUID) -> str | None:
        value = self.client.get(self.key(campaign_id))
        return value.decode() if isinstance(value, bytes) else value
