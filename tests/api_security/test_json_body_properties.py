"""Property tests of the strict JSON decoder every route shares (``app.api.json_body``): for any
document — strings with lone surrogates, NUL and control characters, any nesting depth, numbers
of any size — it either returns a value every later layer can store (UTF-8 encodable text, no
NUL, bigint integers, finite floats, bounded depth) or raises one of the API's typed 4xx errors.
Nothing else escapes it. Then the same through the real app: never a 5xx."""
from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from app import limits
from app.api import json_body
from app.errors import SbcError

# Every code point, surrogates included (what "\\udXXX" escapes can produce), NUL and controls.
ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)
NUMBERS = st.one_of(st.integers(min_value=-(2**80), max_value=2**80),
                    st.floats(allow_nan=False, allow_infinity=False))
DOCUMENTS = st.recursive(
    st.one_of(st.none(), st.booleans(), NUMBERS, ANY_TEXT),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(ANY_TEXT, children, max_size=4)),
    max_leaves=30,
)


def _depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _storable(value) -> bool:
    if isinstance(value, str):
        return "\x00" not in value and not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int):
        return limits.JSON_MIN_INTEGER <= value <= limits.JSON_MAX_INTEGER
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_storable(k) and _storable(v) for k, v in value.items())
    return all(_storable(v) for v in value)


@settings(max_examples=300, deadline=None)
@given(document=DOCUMENTS)
def test_given_any_json_document_when_decoded_then_storable_value_or_typed_4xx(document):
    raw = json.dumps(document)  # ensure_ascii: surrogates travel as \\udXXX escapes, as clients send them
    try:
        value = json_body.loads(raw.encode())
    except SbcError as exc:
        assert 400 <= exc.status < 500 and exc.code
        assert not (_storable(document) and _depth(document) <= limits.JSON_MAX_DEPTH)
        return
    assert value == document
    assert _storable(value) and _depth(value) <= limits.JSON_MAX_DEPTH
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # what psycopg2/Redis/hashlib will do


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(min_value=0, max_value=3000), kind=st.sampled_from("[{"))
def test_given_nesting_of_any_depth_when_decoded_then_accepted_up_to_the_limit_else_json_too_deep(depth, kind):
    raw = ('{"a":' * depth + "1" + "}" * depth) if kind == "{" else ("[" * depth + "0" + "]" * depth)
    try:
        json_body.loads(raw)
    except json_body.JsonTooDeep:
        assert depth > limits.JSON_MAX_DEPTH
    else:
        assert depth <= limits.JSON_MAX_DEPTH


@settings(max_examples=200, deadline=None)
@given(number=st.integers(min_value=-(2**200), max_value=2**200))
def test_given_any_integer_when_decoded_then_accepted_only_within_bigint(number):
    try:
        assert json_body.loads(str(number)) == number
    except json_body.NumberOutOfRange:
        assert not limits.JSON_MIN_INTEGER <= number <= limits.JSON_MAX_INTEGER
    else:
        assert limits.JSON_MIN_INTEGER <= number <= limits.JSON_MAX_INTEGER


@settings(max_examples=100, deadline=None)
@given(raw=st.binary(max_size=64))
def test_given_arbitrary_bytes_when_decoded_then_value_or_typed_4xx(raw):
    try:
        json_body.loads(raw)
    except SbcError as exc:
        assert 400 <= exc.status < 500


@settings(max_examples=40, deadline=None)
@given(body=DOCUMENTS)
def test_given_any_json_body_when_posted_to_login_and_a_resource_then_never_a_server_error(api_app, body):
    from tests.plugins.api import ApiHarness

    client = ApiHarness(api_app).anonymous("nobody.localhost")
    raw = json.dumps(body).encode()
    for path in ("/auth/login", "/api/applications"):
        response = client.post(path, data=raw, content_type="application/json")
        assert response.status_code < 500, response.get_json()
        assert response.get_json()["code"]
