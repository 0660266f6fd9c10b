"""Campaigns that dial: schedule, calling window, retries, pacing settings; contact time zones,
retry times and dispositions; the account's do-not-call list; dialer mode ``predictive``

- ``campaigns``: ``scheduled_at``, the calling window (``window_start``/``window_end`` in the
  contact's local time, ``allowed_weekdays`` as ISO weekdays), ``retry_policy`` (per attempt
  outcome), ``power_ratio``, ``abandon_cap_percent`` and ``status_changed_at``; the dialer mode
  CHECK gains ``predictive``.
- ``campaign_contacts``: ``time_zone`` (given) and ``time_zones`` (what the window is checked
  in), ``next_attempt_at``, ``disposition``/``disposition_note``/``disposed_at``, and a CHECK on
  ``last_result`` (an attempt outcome).
- ``do_not_call``: tenant-owned, with the same FORCE'd row-level-security policy as every tenant
  table in 0001.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26 11:30:00
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0012'
down_revision: Union[str, Sequence[str], None] = '0011'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# frozen literals: later revisions must not change these
CURRENT_ACCOUNT = "NULLIF(current_setting('app.current_account', true), '')::uuid"
MODES_BEFORE = "dialer_mode IN ('preview', 'progressive', 'power')"
MODES_AFTER = "dialer_mode IN ('preview', 'progressive', 'power', 'predictive')"
OUTCOMES = "last_result IS NULL OR last_result IN ('human', 'busy', 'no_answer', 'machine', 'failed', 'abandoned')"
DNC = "do_not_call"


def upgrade() -> None:
    op.add_column('campaigns', sa.Column('scheduled_at', sa.DateTime(timezone=True), nullable=True))
    op.add_column('campaigns', sa.Column('window_start', sa.Time(), server_default=sa.text("'08:00'"),
                                         nullable=False))
    op.add_column('campaigns', sa.Column('window_end', sa.Time(), server_default=sa.text("'21:00'"),
                                         nullable=False))
    op.add_column('campaigns', sa.Column('allowed_weekdays', postgresql.ARRAY(sa.SmallInteger()),
                                         server_default=sa.text("'{1,2,3,4,5,6,7}'::smallint[]"), nullable=False))
    op.add_column('campaigns', sa.Column('retry_policy', postgresql.JSONB(astext_type=sa.Text()),
                                         server_default=sa.text("'{}'::jsonb"), nullable=False))
    op.add_column('campaigns', sa.Column('power_ratio', sa.Float(), server_default=sa.text('2.0'), nullable=False))
    op.add_column('campaigns', sa.Column('abandon_cap_percent', sa.Float(), server_default=sa.text('3.0'),
                                         nullable=False))
    op.add_column('campaigns', sa.Column('status_changed_at', sa.DateTime(timezone=True),
                                         server_default=sa.text('now()'), nullable=False))
    op.drop_constraint(op.f('ck_campaigns_dialer_mode_known'), 'campaigns', type_='check')
    op.create_check_constraint(op.f('ck_campaigns_dialer_mode_known'), 'campaigns', MODES_AFTER)
    op.create_check_constraint(op.f('ck_campaigns_window_ordered'), 'campaigns', 'window_start < window_end')
    op.create_check_constraint(op.f('ck_campaigns_power_ratio_range'), 'campaigns', 'power_ratio >= 1 AND power_ratio <= 5')
    op.create_check_constraint(op.f('ck_campaigns_abandon_cap_range'), 'campaigns',
                               'abandon_cap_percent > 0 AND abandon_cap_percent <= 100')

    op.add_column('campaign_contacts', sa.Column('time_zone', sa.String(length=64), nullable=True))
    op.add_column('campaign_contacts', sa.Column('time_zones', postgresql.ARRAY(sa.String(length=64)),
                                                 server_default=sa.text("'{}'::varchar[]"), nullable=False))
    op.add_column('campaign_contacts', sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True))
    op.add_column('campaign_contacts', sa.Column('disposition', sa.String(length=64), nullable=True))
    op.add_column('campaign_contacts', sa.Column('disposition_note', sa.Text(), nullable=True))
    op.add_column('campaign_contacts', sa.Column('disposed_at', sa.DateTime(timezone=True), nullable=True))
    # nothing ever wrote last_result before this revision (no dialer): clear any stray value
    op.execute(f"UPDATE campaign_contacts SET last_result = NULL WHERE NOT ({OUTCOMES})")
    op.create_check_constraint(op.f('ck_campaign_contacts_last_result_known'), 'campaign_contacts', OUTCOMES)
    op.create_index('ix_campaign_contacts_due', 'campaign_contacts', ['campaign_id', 'next_attempt_at'],
                    unique=False, postgresql_where=sa.text("status = 'pending'"))

    op.create_table(
        DNC,
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('number', sa.String(length=32), nullable=False),
        sa.Column('reason', sa.String(length=255), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.Column('account_id', sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], name=op.f('fk_do_not_call_account_id_accounts'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_do_not_call')),
        sa.UniqueConstraint('account_id', 'number', name='uq_do_not_call_account_number'),
    )
    op.create_index(op.f('ix_do_not_call_account_id'), DNC, ['account_id'], unique=False)
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE {DNC} TO sbc_app")
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE {DNC} TO sbc_platform")
    op.execute(f"ALTER TABLE {DNC} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {DNC} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON {DNC} "
        f"USING (account_id = {CURRENT_ACCOUNT}) WITH CHECK (account_id = {CURRENT_ACCOUNT})"
    )


def downgrade() -> None:
    op.drop_index(op.f('ix_do_not_call_account_id'), table_name=DNC)
    op.drop_table(DNC)
    op.drop_index('ix_campaign_contacts_due', table_name='campaign_contacts',
                  postgresql_where=sa.text("status = 'pending'"))
    op.drop_constraint(op.f('ck_campaign_contacts_last_result_known'), 'campaign_contacts', type_='check')
    for column in ('disposed_at', 'disposition_note', 'disposition', 'next_attempt_at', 'time_zones', 'time_zone'):
        op.drop_column('campaign_contacts', column)
    for name in ('abandon_cap_range', 'power_ratio_range', 'window_ordered', 'dialer_mode_known'):
        op.drop_constraint(op.f(f'ck_campaigns_{name}'), 'campaigns', type_='check')
    op.execute("UPDATE campaigns SET dialer_mode = 'power' WHERE dialer_mode = 'predictive'")
    op.create_check_constraint(op.f('ck_campaigns_dialer_mode_known'), 'campaigns', MODES_BEFORE)
    for column in ('status_changed_at', 'abandon_cap_percent', 'power_ratio', 'retry_policy', 'allowed_weekdays',
                   'window_end', 'window_start', 'scheduled_at'):
        op.drop_column('campaigns', column)
