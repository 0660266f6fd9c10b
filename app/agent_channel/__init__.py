"""The agent channel: one authenticated WebSocket per agent session (docs/agents.md)."""
