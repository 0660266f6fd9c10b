"""trunks on the internet: TLS gateways, SRTP per carrier, outbound registration

- ``gateways.transport`` may be ``tls`` (the trunk profile's TLS listener, FS_TLS);
- ``carriers.srtp``: off | optional | mandatory, SDES on both legs of the carrier;
- ``gateways.register`` with ``register_expiry`` / ``register_retry``: the switch registers to
  the carrier with the stored (encrypted) credentials, which a registering gateway must have.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26 11:40:00
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = '0013'
down_revision: Union[str, Sequence[str], None] = '0012'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.drop_constraint(op.f('ck_gateways_transport_known'), 'gateways', type_='check')
    op.create_check_constraint(op.f('ck_gateways_transport_known'), 'gateways',
                               "transport IN ('udp', 'tcp', 'tls')")
    op.add_column('carriers', sa.Column('srtp', sa.String(length=9), server_default=sa.text("'off'"),
                                        nullable=False))
    op.create_check_constraint(op.f('ck_carriers_srtp_known'), 'carriers',
                               "srtp IN ('off', 'optional', 'mandatory')")
    op.add_column('gateways', sa.Column('register', sa.Boolean(), server_default=sa.text('false'),
                                        nullable=False))
    op.add_column('gateways', sa.Column('register_expiry', sa.Integer(), server_default=sa.text('600'),
                                        nullable=False))
    op.add_column('gateways', sa.Column('register_retry', sa.Integer(), server_default=sa.text('30'),
                                        nullable=False))
    op.create_check_constraint(
        op.f('ck_gateways_register_has_credentials'), 'gateways',
        'NOT register OR (register_username IS NOT NULL AND register_password_encrypted IS NOT NULL)')
    op.create_check_constraint(op.f('ck_gateways_register_expiry_range'), 'gateways',
                               'register_expiry BETWEEN 60 AND 86400')
    op.create_check_constraint(op.f('ck_gateways_register_retry_range'), 'gateways',
                               'register_retry BETWEEN 5 AND 3600')


def downgrade() -> None:
    for name in ('register_retry_range', 'register_expiry_range', 'register_has_credentials'):
        op.drop_constraint(op.f(f'ck_gateways_{name}'), 'gateways', type_='check')
    for column in ('register_retry', 'register_expiry', 'register'):
        op.drop_column('gateways', column)
    op.drop_constraint(op.f('ck_carriers_srtp_known'), 'carriers', type_='check')
    op.drop_column('carriers', 'srtp')
    op.execute("UPDATE gateways SET transport = 'tcp' WHERE transport = 'tls'")
    op.drop_constraint(op.f('ck_gateways_transport_known'), 'gateways', type_='check')
    op.create_check_constraint(op.f('ck_gateways_transport_known'), 'gateways',
                               "transport IN ('udp', 'tcp')")
