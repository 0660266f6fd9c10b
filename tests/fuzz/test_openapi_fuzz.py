"""Schemathesis over ``/api/openapi.json``: every operation, authenticated as the admin of one
of two seeded tenants (alternating), with a fixed seed and a bounded number of examples.

Bounded on purpose (``EXAMPLES_PER_OPERATION`` per operation, fixed ``SEED``): it runs in the
normal test command on a 2-core machine; ``benchmarks/fuzz_bench.py`` prints operations x
examples and the wall time.

Checks: no 5xx (``not_a_server_error``), every status code declared for the operation
(``status_code_conformance``), every body valid against its declared schema
(``response_schema_conformance``) and content type (``content_type_conformance``). Cases are
generated both within the declared schema (positive) and outside it (negative: wrong types,
missing fields, out-of-range values), so the 4xx paths are exercised too.
"""
from __future__ import annotations

import itertools
import logging
import os
import time

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.transport.serialization import serialize_binary

from app.api.raw_uploads import RAW_UPLOADS
from tests.plugins.api import ApiHarness, Seeder

EXAMPLES_PER_OPERATION = int(os.environ.get("SBC_FUZZ_EXAMPLES", "20"))
# benchmarks/fuzz_bench.py sets this to collect "operation<TAB>cases sent" lines for its figures
STATS_FILE = os.environ.get("SBC_FUZZ_STATS")
SEED = 20261122
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


@schemathesis.serializer(*sorted({t for upload in RAW_UPLOADS for t in upload.content_types}))
def _raw_upload_body(_ctx, value) -> bytes:
    """The upload routes' raw bodies (app/api/raw_uploads.py), sent as the bytes generated for
    their ``format: binary`` schema (schemathesis ships no serializer for audio types)."""
    return serialize_binary(value)


def _operation_labels() -> list[str]:
    from app.api.app import create_app

    document = create_app({"TESTING": True}).test_client().get("/api/openapi.json").get_json()
    return [f"{method.upper()} {path}" for path, operations in document["paths"].items()
            for method in operations if method != "parameters"]


OPERATIONS = _operation_labels()


@pytest.fixture(scope="module")
def fuzz_schema(api_app):
    return schemathesis.openapi.from_wsgi("/api/openapi.json", api_app)


@pytest.fixture(scope="module")
def tenant_headers(api_app, owner_engine):
    """Host + Bearer headers of two tenants' admins (every license), used in turn. Every case
    gets a session of its own: a case may end it (``POST /auth/logout`` revokes the token it
    presents), and the next case must still be authenticated."""
    harness, seeder = ApiHarness(api_app), Seeder(owner_engine)
    tenants = [seeder.tenant(), seeder.tenant()]
    for tenant in tenants:
        harness.login(tenant)  # the real login path works for both
    turns = itertools.cycle(tenants)

    def fresh() -> dict[str, str]:
        tenant = next(turns)
        token = harness.mint(tenant, role="admin", iat_ms=int(time.time() * 1000))
        return {"Host": tenant.host, "Authorization": f"Bearer {token}"}

    return fresh


@pytest.mark.parametrize("label", OPERATIONS)
def test_given_generated_requests_when_sent_then_no_server_error_and_schema_kept(
        label, fuzz_schema, tenant_headers, caplog):
    method, path = label.split(" ", 1)
    operation = fuzz_schema[path][method]
    strategy = st.one_of(operation.as_strategy(GenerationMode.POSITIVE),
                         operation.as_strategy(GenerationMode.NEGATIVE))

    sent = 0

    @hypothesis_seed(SEED)
    @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=strategy)
    def run(case) -> None:
        nonlocal sent
        sent += 1
        response = case.call(headers=tenant_headers())
        case.validate_response(response, checks=CHECKS)

    caplog.set_level(logging.WARNING)
    run()
    tracebacks = [r.getMessage() for r in caplog.records if r.name.startswith(("app", "esl"))
                  and (r.exc_info or r.levelno >= logging.ERROR)]
    assert not tracebacks, tracebacks  # bad input is answered, never logged as a crash
    if STATS_FILE:
        with open(STATS_FILE, "a", encoding="utf-8") as stats:
            stats.write(f"{label}\t{sent}\n")
