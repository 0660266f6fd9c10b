"""Tenant lifecycle: creating accounts with their first admin."""
