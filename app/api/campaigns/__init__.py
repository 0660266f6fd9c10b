"""/api/campaigns — outbound campaigns: definitions, the state actions, contact lists (JSON and
CSV) and dispositions. The rules live in ``app.campaigns``; no process dials yet
(docs/campaigns.md "What is not built yet")."""
