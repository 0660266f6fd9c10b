"""campaign safe harbour: what a person hears when a power/predictive call finds no agent

- ``campaigns.safe_harbour_text``: said (TTS) to a live answer no agent took within
  ``CAMPAIGN_ABANDON_CONNECT_SECONDS``; ``campaigns.safe_harbour_url``: a recording played
  instead. Both null: the platform's default text (app/campaigns/safe_harbour.py); at most
  one is set.

Revision ID: 0015
Revises: 0013
Create Date: 2026-11-26 14:50:00
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = '0015'
down_revision: Union[str, Sequence[str], None] = '0014'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column('campaigns', sa.Column('safe_harbour_text', sa.String(length=500), nullable=True))
    op.add_column('campaigns', sa.Column('safe_harbour_url', sa.String(length=2048), nullable=True))
    op.create_check_constraint(op.f('ck_campaigns_safe_harbour_one'), 'campaigns',
                               "safe_harbour_text IS NULL OR safe_harbour_url IS NULL")


def downgrade() -> None:
    op.drop_constraint(op.f('ck_campaigns_safe_harbour_one'), 'campaigns', type_='check')
    op.drop_column('campaigns', 'safe_harbour_url')
    op.drop_column('campaigns', 'safe_harbour_text')
