"""interaction_segment.call_id: the caller's leg an agent's ownership window belongs to

The agent channel names a call by its call id (the offer's ``offerId``), live or just over;
the segment (written when the agent answers) maps it to the conversation (``trace_id``) whose
summary carries the disposition. No foreign key: records never point at rows that may go.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23 02:00:00
"""
from __future__ import annotations

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa

revision: str = '0009'
down_revision: Union[str, Sequence[str], None] = '0008'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column('interaction_segment', sa.Column('call_id', sa.Uuid(), nullable=True))
    op.create_index(op.f('ix_interaction_segment_call_id'), 'interaction_segment', ['call_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_interaction_segment_call_id'), table_name='interaction_segment')
    op.drop_column('interaction_segment', 'call_id')
