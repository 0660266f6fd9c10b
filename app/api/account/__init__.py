"""/api/account — the caller's own tenant: what it may use (licenses, concurrency limit) and the
one change a tenant may make itself: lowering its concurrency limit (raising it, licenses and
disabling are the operator's: ``sbc tenant update|disable``)."""
