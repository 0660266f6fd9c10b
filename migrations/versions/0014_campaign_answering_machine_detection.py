"""campaign answering-machine detection: what a campaign does when a machine answers

- ``campaigns.amd``: off | hangup | message | connect (app/voice/amd.py, docs/campaigns.md
  "Answering-machine detection"), default off: existing campaigns keep dialling as before;
- ``campaigns.amd_message``: the one ``say`` or ``play`` verb left on the machine after its
  beep, required in ``message`` mode.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26 14:40:00
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0014'
down_revision: Union[str, Sequence[str], None] = '0013'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column('campaigns', sa.Column('amd', sa.String(length=8), server_default=sa.text("'off'"),
                                         nullable=False))
    op.add_column('campaigns', sa.Column('amd_message', postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    op.create_check_constraint(op.f('ck_campaigns_amd_known'), 'campaigns',
                               "amd IN ('off', 'hangup', 'message', 'connect')")
    op.create_check_constraint(op.f('ck_campaigns_amd_message_given'), 'campaigns',
                               "amd <> 'message' OR amd_message IS NOT NULL")


def downgrade() -> None:
    op.drop_constraint(op.f('ck_campaigns_amd_message_given'), 'campaigns', type_='check')
    op.drop_constraint(op.f('ck_campaigns_amd_known'), 'campaigns', type_='check')
    op.drop_column('campaigns', 'amd_message')
    op.drop_column('campaigns', 'amd')
