import json

from app.webhooks.signing import sign, verify


def test_given_known_vector_when_signed_then_hex_hmac_sha256_without_prefix():
    # RFC-style vector widely published for HMAC-SHA256 (key "key").
    body = b"The quick brown fox jumps over the lazy dog"
    assert sign(body, "key") == "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"


def test_given_reserialised_body_when_verified_then_signature_does_not_match():
    raw = b'{"callId":"c1","from":"15551234567"}'
    signature = sign(raw, "s3cret")
    reserialised = json.dumps(json.loads(raw)).encode()   # adds spaces after ':' and ','
    assert verify(raw, "s3cret", signature)
    assert not verify(reserialised, "s3cret", signature)


def test_given_wrong_secret_or_missing_header_when_verified_then_rejected():
    raw = b"{}"
    assert not verify(raw, "other", sign(raw, "s3cret"))
    assert not verify(raw, "s3cret", None)


def test_given_a_dict_instead_of_bytes_when_signing_then_type_error():
    import pytest
    with pytest.raises(TypeError):
        sign({"a": 1}, "k")  # type: ignore[arg-type]
