"""Verb fields end their patterns in ``$``, which ``re.match`` lets match before a final newline:
a dial target ``"15551234567\\n"`` or a URL with a trailing newline passed validation and would end
the ESL command line it is written into. Saved verb lists (app_json) must refuse them."""
from __future__ import annotations

import pytest

from tests.api_management.helpers import PUBLIC_HOOK, admin_client

VERBS = [
    pytest.param({"verb": "dial", "target": [{"type": "phone", "name": "15551234567\n"}]}, id="dial_phone"),
    pytest.param({"verb": "dial", "target": [{"type": "user", "name": "alice\n"}]}, id="dial_user"),
    pytest.param({"verb": "play", "url": "https://8.8.8.8/a.wav\n"}, id="play_url"),
    pytest.param({"verb": "redirect", "url": PUBLIC_HOOK + "\n"}, id="redirect_url"),
]


@pytest.mark.parametrize("verb", VERBS)
def test_given_verb_value_with_trailing_newline_when_app_json_saved_then_422(api, seed, verb):
    _tenant, client = admin_client(api, seed)

    response = client.post("/api/applications", json={"name": "a", "app_json": [verb]})

    assert response.status_code == 422, response.get_json()
    assert response.get_json()["code"] == "verb_list_rejected"


@pytest.mark.parametrize("verb", [
    {"verb": "dial", "target": [{"type": "phone", "name": "15551234567"}]},
    {"verb": "play", "url": "https://8.8.8.8/a.wav"},
], ids=["dial_phone", "play_url"])
def test_given_same_verb_without_newline_when_saved_then_201(api, seed, verb):
    _tenant, client = admin_client(api, seed)

    assert client.post("/api/applications", json={"name": "a", "app_json": [verb]}).status_code == 201
