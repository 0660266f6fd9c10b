"""campaign visibility: campaign and contact on call records, attempt counts per campaign, skips

- ``call_records.campaign_id`` / ``contact_id``: a campaign call's record names its campaign and
  contact (stamped by the dialer when it applies the call's outcome); no foreign key, as for the
  record's other references, so deleting a campaign never rewrites history;
- ``campaigns.outcome_counts``: attempts per outcome (and preview skips), counted in the
  transaction that applies each outcome, for the live figures;
- ``campaign_contacts.skips``: how often agents skipped the contact in preview mode.

Revision ID: 0016
Revises: 0013
Create Date: 2026-11-26 14:50:00
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = '0016'
down_revision: Union[str, Sequence[str], None] = '0015'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column('call_records', sa.Column('campaign_id', sa.Uuid(), nullable=True))
    op.add_column('call_records', sa.Column('contact_id', sa.Uuid(), nullable=True))
    op.create_index('ix_call_records_account_campaign', 'call_records',
                    ['account_id', 'campaign_id', sa.text('started_at DESC')],
                    postgresql_where=sa.text('campaign_id IS NOT NULL'))
    op.add_column('campaigns', sa.Column('outcome_counts', sa.dialects.postgresql.JSONB(),
                                         server_default=sa.text("'{}'::jsonb"), nullable=False))
    op.add_column('campaign_contacts', sa.Column('skips', sa.Integer(), server_default=sa.text('0'),
                                                 nullable=False))
    op.create_check_constraint(op.f('ck_campaign_contacts_skips_non_negative'), 'campaign_contacts',
                               'skips >= 0')


def downgrade() -> None:
    op.drop_constraint(op.f('ck_campaign_contacts_skips_non_negative'), 'campaign_contacts', type_='check')
    op.drop_column('campaign_contacts', 'skips')
    op.drop_column('campaigns', 'outcome_counts')
    op.drop_index('ix_call_records_account_campaign', table_name='call_records')
    op.drop_column('call_records', 'contact_id')
    op.drop_column('call_records', 'campaign_id')
