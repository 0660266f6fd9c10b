"""/api/call-flows — visual call flows, validated as a whole graph on every save."""
