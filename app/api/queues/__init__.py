"""/api/queues — ACD queues (license ``queue-mgmt``, like their callbacks)."""
