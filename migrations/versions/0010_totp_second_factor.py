"""TOTP second factor: per-user secret, last used step and recovery codes; per-tenant requirement

- ``users.totp_*``: the secret Fernet-encrypted (app/crypto.py), the confirmation time (a
  secret is active only once a first code was accepted), the last accepted time step (a code
  is never accepted twice) and the recovery codes as keyed SHA-256 hashes. They live on
  ``users`` so they inherit its FORCE'd row-level-security policy (0001) unchanged: no new
  tenant table, no new policy.
- ``accounts.mfa_required``: every user of the tenant must sign in with a second factor. The
  API role has no UPDATE on ``accounts``; like ``lower_own_account_limit`` (0003) one definer
  function lets the current tenant (``app.current_account``) set this one column of its own
  row, and nothing else.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 10:00:00
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0010'
down_revision: Union[str, Sequence[str], None] = '0009'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# frozen literal (0001's policy expression)
CURRENT_ACCOUNT = "NULLIF(current_setting('app.current_account', true), '')::uuid"


def upgrade() -> None:
    op.add_column('users', sa.Column('totp_secret_encrypted', sa.Text(), nullable=True))
    op.add_column('users', sa.Column('totp_confirmed_at', sa.DateTime(timezone=True), nullable=True))
    op.add_column('users', sa.Column('totp_last_step', sa.BigInteger(), nullable=True))
    op.add_column('users', sa.Column('totp_recovery_hashes', postgresql.ARRAY(sa.Text()),
                                     server_default=sa.text("'{}'::text[]"), nullable=False))
    op.add_column('accounts', sa.Column('mfa_required', sa.Boolean(),
                                        server_default=sa.text('false'), nullable=False))
    op.execute(f"""
        CREATE OR REPLACE FUNCTION set_own_account_mfa_required(p_required boolean) RETURNS boolean
        LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = pg_catalog, public
        AS $$
        DECLARE
            acct uuid := {CURRENT_ACCOUNT};
        BEGIN
            IF acct IS NULL OR p_required IS NULL THEN
                RAISE EXCEPTION 'no tenant in this transaction' USING ERRCODE = '42501';
            END IF;
            UPDATE public.accounts SET mfa_required = p_required
                WHERE id = acct AND disabled_at IS NULL;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'account not found' USING ERRCODE = '42501';
            END IF;
            RETURN p_required;
        END
        $$
    """)
    op.execute("REVOKE ALL ON FUNCTION set_own_account_mfa_required(boolean) FROM PUBLIC")
    op.execute("GRANT EXECUTE ON FUNCTION set_own_account_mfa_required(boolean) TO sbc_app")


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS set_own_account_mfa_required(boolean)")
    op.drop_column('accounts', 'mfa_required')
    op.drop_column('users', 'totp_recovery_hashes')
    op.drop_column('users', 'totp_last_step')
    op.drop_column('users', 'totp_confirmed_at')
    op.drop_column('users', 'totp_secret_encrypted')
