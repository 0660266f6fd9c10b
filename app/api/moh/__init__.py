"""/api/moh — an account's uploaded hold music (license ``queue-mgmt``, like its queues)."""
