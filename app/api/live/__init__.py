"""The console's live view (wallboard): a stream ticket, and the server-sent events stream the
bus feeds (docs/api.md "Live view")."""
