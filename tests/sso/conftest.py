from __future__ import annotations

from typing import Iterator

import pytest

from tests.plugins.skips import skip_or_fail_in_ci
from tests.sso.provider import OidcProviders, missing_reason


@pytest.fixture(scope="session")
def oidc() -> Iterator[OidcProviders]:
    """Two issuers of a real OpenID provider on loopback, for the whole run."""
    missing = missing_reason()
    if missing:
        skip_or_fail_in_ci(f"OpenID provider: {missing}")
    providers = OidcProviders()
    try:
        yield providers
    finally:
        providers.stop()
