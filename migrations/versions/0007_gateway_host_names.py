"""outbound gateways may be given as a DNS host name (FreeSWITCH resolves it)

``gateways.host`` (a carrier's FQDN) for outbound-only gateways; ``ipv4`` becomes nullable and
exactly one of the two is set. Inbound gateways stay IP/CIDR: the ACL admits addresses.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22 23:55:00
"""
from __future__ import annotations

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa

revision: str = '0007'
down_revision: Union[str, Sequence[str], None] = '0006'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column('gateways', sa.Column('host', sa.String(length=253), nullable=True))
    op.alter_column('gateways', 'ipv4', nullable=True)
    op.alter_column('gateways', 'network', nullable=True)  # derived from ipv4: NULL with it
    op.create_check_constraint(op.f('ck_gateways_ipv4_or_host'), 'gateways',
                               '(ipv4 IS NULL) <> (host IS NULL)')
    op.create_check_constraint(op.f('ck_gateways_host_outbound_only'), 'gateways',
                               'host IS NULL OR (NOT inbound AND netmask = 32)')


def downgrade() -> None:
    op.execute("DELETE FROM gateways WHERE host IS NOT NULL")
    op.drop_constraint(op.f('ck_gateways_host_outbound_only'), 'gateways', type_='check')
    op.drop_constraint(op.f('ck_gateways_ipv4_or_host'), 'gateways', type_='check')
    op.alter_column('gateways', 'ipv4', nullable=False)
    op.alter_column('gateways', 'network', nullable=False)
    op.drop_column('gateways', 'host')
