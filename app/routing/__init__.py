"""Trunks and least-cost routing: the gateways ACL, compiled LCR plans and bridge strings,
gateway health, and the FreeSWITCH config generated from the database.

Everything the call path needs is compiled into immutable data (``RoutingTable``) so a lookup
never touches the database; ``routing.config.changed`` swaps in a freshly compiled table.
"""
