"""/api/sip-targets: the hosts the account's ``dial`` verb may reach with ``sip:`` targets."""
