"""/api/do-not-call — the account's do-not-call list: numbers no campaign ever dials. Checked
when a contact is picked for dialling (app/campaigns/picking.py), so a number added while a
campaign runs is honoured from its next pick."""
