"""answering-machine detection in reports: the verdict on call records and contacts

- ``call_records.amd_result``: the detection's verdict of a campaign call (``human``,
  ``machine``, ``notsure``; ``none`` when it ran but the customer hung up before its verdict),
  NULL when none ran (stamped by the dialer with the campaign and the contact);
- ``campaign_contacts.last_amd_result``: the same for the contact's last attempt.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 18:50:00
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = '0017'
down_revision: Union[str, Sequence[str], None] = '0016'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_RESULTS = "('human', 'machine', 'notsure', 'none')"


def upgrade() -> None:
    op.add_column('call_records', sa.Column('amd_result', sa.String(length=8), nullable=True))
    op.create_check_constraint(op.f('ck_call_records_amd_result_known'), 'call_records',
                               f"amd_result IS NULL OR amd_result IN {_RESULTS}")
    op.add_column('campaign_contacts', sa.Column('last_amd_result', sa.String(length=8), nullable=True))
    op.create_check_constraint(op.f('ck_campaign_contacts_last_amd_result_known'), 'campaign_contacts',
                               f"last_amd_result IS NULL OR last_amd_result IN {_RESULTS}")


def downgrade() -> None:
    op.drop_constraint(op.f('ck_campaign_contacts_last_amd_result_known'), 'campaign_contacts', type_='check')
    op.drop_column('campaign_contacts', 'last_amd_result')
    op.drop_constraint(op.f('ck_call_records_amd_result_known'), 'call_records', type_='check')
    op.drop_column('call_records', 'amd_result')
