"""agents get SIP credentials for the internal profile; queues get their delivery settings

Agents register on the ``internal`` sofia profile with a generated SIP user name and password
(password Fernet-encrypted at rest, app/crypto.py; the generated directory carries only the
digest A1 hash). Queues get the offer timeout, the consecutive misses that make an agent
``not_ready`` and the after-call-work seconds (docs/agents.md).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22 23:50:00
"""
from __future__ import annotations

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa

revision: str = '0006'
down_revision: Union[str, Sequence[str], None] = '0005'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column('agents', sa.Column('sip_username', sa.String(length=64), nullable=True))
    op.add_column('agents', sa.Column('sip_password_encrypted', sa.Text(), nullable=True))
    op.create_unique_constraint(op.f('uq_agents_sip_username'), 'agents', ['sip_username'])
    op.add_column('queues', sa.Column('offer_timeout_seconds', sa.Integer(), nullable=False,
                                      server_default=sa.text('20')))
    op.add_column('queues', sa.Column('max_missed_offers', sa.Integer(), nullable=False,
                                      server_default=sa.text('3')))
    op.add_column('queues', sa.Column('wrap_up_seconds', sa.Integer(), nullable=False,
                                      server_default=sa.text('10')))
    op.create_check_constraint(op.f('ck_queues_offer_timeout_positive'), 'queues', 'offer_timeout_seconds > 0')
    op.create_check_constraint(op.f('ck_queues_max_missed_positive'), 'queues', 'max_missed_offers > 0')
    op.create_check_constraint(op.f('ck_queues_wrap_up_not_negative'), 'queues', 'wrap_up_seconds >= 0')


def downgrade() -> None:
    for name in ('ck_queues_wrap_up_not_negative', 'ck_queues_max_missed_positive',
                 'ck_queues_offer_timeout_positive'):
        op.drop_constraint(op.f(name), 'queues', type_='check')
    for column in ('wrap_up_seconds', 'max_missed_offers', 'offer_timeout_seconds'):
        op.drop_column('queues', column)
    op.drop_constraint(op.f('uq_agents_sip_username'), 'agents', type_='unique')
    op.drop_column('agents', 'sip_password_encrypted')
    op.drop_column('agents', 'sip_username')
