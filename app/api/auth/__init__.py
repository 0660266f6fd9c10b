"""Authentication endpoints and token issuing."""
