"""/api/agents — the contact-centre face of a user and its queue memberships (license
``queue-mgmt``). Presence state is read-only here: agents change it through the SDK."""
