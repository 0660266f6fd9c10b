"""/api/agents — the contact-centre face of a user and its queue memberships (license
``queue-mgmt``). Presence state changes only through ``/state`` (app/contact/states.py)."""
