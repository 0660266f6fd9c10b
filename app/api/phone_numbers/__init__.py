"""/api/phone-numbers — numbers of the account and their answering settings (call flow or webhook)."""
