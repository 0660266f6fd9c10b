"""The contact centre: agents as SIP endpoints on the ``internal`` profile, their state, and
the distribution of queued callers to them (docs/agents.md)."""
