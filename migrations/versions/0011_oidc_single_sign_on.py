"""OIDC single sign-on per tenant: the tenant's identity provider and the users' stable subjects

- ``sso_providers``: at most one OpenID provider per account (issuer, client id, the client
  secret Fernet-encrypted with app/crypto.py, the claim → role mapping, whether a first sign-in
  creates the user). Tenant-owned with the same FORCE'd row-level-security policy as every
  tenant table in 0001.
- ``users.sso_issuer`` + ``users.sso_subject``: the stable identity (OIDC Core §5.7: ``iss`` and
  ``sub`` together) a single sign-on is matched by; unique per account, both set or both NULL.
  Never the e-mail or the user name, which an identity provider lets people change.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26 11:30:00
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0011'
down_revision: Union[str, Sequence[str], None] = '0010'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# frozen literal (0001's policy expression): later revisions must not change this one
CURRENT_ACCOUNT = "NULLIF(current_setting('app.current_account', true), '')::uuid"
TABLE = "sso_providers"


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('issuer', sa.String(length=2048), nullable=False),
        sa.Column('client_id', sa.String(length=255), nullable=False),
        sa.Column('client_secret_encrypted', sa.Text(), nullable=False),
        sa.Column('display_name', sa.String(length=100), nullable=False),
        sa.Column('role_claim', sa.String(length=100), nullable=True),
        sa.Column('role_mapping', postgresql.JSONB(), server_default=sa.text("'[]'::jsonb"), nullable=False),
        sa.Column('default_role', sa.String(length=16), nullable=True),
        sa.Column('create_users', sa.Boolean(), server_default=sa.text('false'), nullable=False),
        sa.Column('enabled', sa.Boolean(), server_default=sa.text('true'), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.Column('account_id', sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], name=op.f('fk_sso_providers_account_id_accounts'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_sso_providers')),
        sa.UniqueConstraint('account_id', name='uq_sso_providers_account'),
        sa.CheckConstraint("default_role IS NULL OR default_role IN ('admin', 'supervisor', 'agent')",
                           name=op.f('ck_sso_providers_default_role_known')),
    )
    op.create_index(op.f('ix_sso_providers_account_id'), TABLE, ['account_id'], unique=False)
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE {TABLE} TO sbc_app")
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE {TABLE} TO sbc_platform")
    op.execute(f"ALTER TABLE {TABLE} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {TABLE} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON {TABLE} "
        f"USING (account_id = {CURRENT_ACCOUNT}) WITH CHECK (account_id = {CURRENT_ACCOUNT})"
    )
    op.add_column('users', sa.Column('sso_issuer', sa.String(length=2048), nullable=True))
    op.add_column('users', sa.Column('sso_subject', sa.String(length=255), nullable=True))
    op.create_unique_constraint('uq_users_account_sso_subject', 'users',
                                ['account_id', 'sso_issuer', 'sso_subject'])
    op.create_check_constraint('ck_users_sso_subject_pair', 'users',
                               '(sso_issuer IS NULL) = (sso_subject IS NULL)')


def downgrade() -> None:
    op.drop_constraint('ck_users_sso_subject_pair', 'users', type_='check')
    op.drop_constraint('uq_users_account_sso_subject', 'users', type_='unique')
    op.drop_column('users', 'sso_subject')
    op.drop_column('users', 'sso_issuer')
    op.drop_index(op.f('ix_sso_providers_account_id'), table_name=TABLE)
    op.drop_table(TABLE)
