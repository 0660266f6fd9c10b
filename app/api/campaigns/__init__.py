"""/api/campaigns — outbound campaign definitions and contact lists. SPEC: "Not yet wired":
nothing dials; ``status`` is stored for the future dialer and does not start anything."""
