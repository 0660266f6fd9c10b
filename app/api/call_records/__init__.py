"""/api/call-records — list with filters, detail by public_id, CSV export (recordings.view)."""
