"""/api/lcr — the account's least-cost-routing plans, their routes and carrier sets.

Tenants manage only their own plans; platform-level plans (``account_id`` NULL) are the
operator's and answer 404 here like any id that is not the caller's. Route regexes are checked
with the router's own compiler (``app.routing.lcr.compile_route_regex``) so nothing is saved
that the router would skip. Every change announces ``routing.config.changed`` (what = lcr).
"""
