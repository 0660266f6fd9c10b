"""/api/applications — what answers a call: a flow, the customer's hook, or a static verb list."""
