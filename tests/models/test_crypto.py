"""Secrets at rest: Fernet tokens under a key derived from settings.secret_key."""
from __future__ import annotations

import pytest

from app.crypto import SecretDecryptionFailed, decrypt_secret, derive_key, encrypt_secret, last4


def test_given_secret_when_encrypted_then_token_hides_it_and_round_trips():
    token = encrypt_secret("whsec_live_0123456789abcdef")
    assert "whsec" not in token and "0123456789" not in token
    assert decrypt_secret(token) == "whsec_live_0123456789abcdef"


def test_given_same_secret_twice_then_tokens_differ():
    assert encrypt_secret("same") != encrypt_secret("same")


def test_given_token_from_another_secret_key_when_decrypting_then_refused_without_echo():
    token = encrypt_secret("hunter2-hunter2", secret_key="old-key")
    with pytest.raises(SecretDecryptionFailed) as info:
        decrypt_secret(token, secret_key="new-key")
    assert token not in str(info.value) and "hunter2" not in str(info.value)


def test_given_tampered_token_when_decrypting_then_refused():
    token = encrypt_secret("abc")
    tampered = token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]
    with pytest.raises(SecretDecryptionFailed):
        decrypt_secret(tampered)


def test_given_secret_key_then_derived_key_is_deterministic_and_not_the_input():
    assert derive_key("k") == derive_key("k") != derive_key("k2")
    assert b"k" * 8 not in derive_key("kkkkkkkk")


def test_last4_shows_only_the_last_four_characters():
    assert last4("whsec_abcd1234") == "1234"
