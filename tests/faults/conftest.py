"""The call-path fixtures of tests/session (numbers with applications, call services)."""
from tests.session.conftest import controller, number_with_app, services  # noqa: F401
