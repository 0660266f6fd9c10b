"""sip_target_hosts: the hosts an account's dial verb may reach with a sip: target

``sip:`` dial targets bypassed carriers, least-cost routing and the address policy (issue 14
item 5): any host, loopback and private ones included. They are now refused unless the host is
listed here by an admin of the account (``/api/sip-targets``) and passes the address policy
when the call dials. Tenant-owned, with the same FORCE'd row-level-security policy as every
tenant table in 0001.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 23:40:00
"""
from __future__ import annotations

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa

revision: str = '0005'
down_revision: Union[str, Sequence[str], None] = '0004'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# frozen literal (0001's policy expression): later revisions must not change this one
CURRENT_ACCOUNT = "NULLIF(current_setting('app.current_account', true), '')::uuid"
TABLE = "sip_target_hosts"


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('host', sa.String(length=253), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.Column('account_id', sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], name=op.f('fk_sip_target_hosts_account_id_accounts'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_sip_target_hosts')),
        sa.UniqueConstraint('account_id', 'host', name='uq_sip_target_hosts_account_host'),
    )
    op.create_index(op.f('ix_sip_target_hosts_account_id'), TABLE, ['account_id'], unique=False)
    op.execute(f"GRANT SELECT, INSERT, DELETE ON TABLE {TABLE} TO sbc_app")
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE {TABLE} TO sbc_platform")
    op.execute(f"ALTER TABLE {TABLE} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {TABLE} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON {TABLE} "
        f"USING (account_id = {CURRENT_ACCOUNT}) WITH CHECK (account_id = {CURRENT_ACCOUNT})"
    )


def downgrade() -> None:
    op.drop_index(op.f('ix_sip_target_hosts_account_id'), table_name=TABLE)
    op.drop_table(TABLE)
