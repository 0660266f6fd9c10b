"""call records name the carrier and gateway that answered a dialled call

A call the ``dial`` verb bridged through least-cost routing was recorded with the *inbound*
carrier only (``carrier_id``/``gateway_id``: who sent us the call); which outbound carrier
answered after LCR failover was lost (issue 9 item 7). ``dial_carrier_id``/``dial_gateway_id``
keep it (the last answered phone target of the leg), without foreign keys like the record's
other references, so a deleted carrier never rewrites history.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 23:20:00
"""
from __future__ import annotations

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa

revision: str = '0004'
down_revision: Union[str, Sequence[str], None] = '0003'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column('call_records', sa.Column('dial_carrier_id', sa.Uuid(), nullable=True))
    op.add_column('call_records', sa.Column('dial_gateway_id', sa.Uuid(), nullable=True))


def downgrade() -> None:
    op.drop_column('call_records', 'dial_gateway_id')
    op.drop_column('call_records', 'dial_carrier_id')
