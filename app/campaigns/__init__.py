"""Outbound campaign rules, free of the API and of call control: the state machine, contact
numbers and their time zones, the calling window, retries, do-not-call and picking contacts at
dial time, and the pacing arithmetic. docs/campaigns.md is the user-facing account."""
