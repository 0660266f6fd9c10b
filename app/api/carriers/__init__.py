"""/api/carriers and /api/gateways — SIP trunks and their signalling addresses.

Platform carriers (``account_id`` NULL) are listed read-only so a tenant can route through them;
their gateways (operator infrastructure) are not shown. Every change publishes
``routing.config.changed`` on ``system.events`` in the same transaction (outbox), so the
controller rebuilds the ACL and gateways only for changes that really committed.
"""
