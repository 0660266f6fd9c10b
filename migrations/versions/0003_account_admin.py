"""account administration: disabled tenants, and a tenant admin lowering its own call limit

- ``accounts.disabled_at``: set by ``sbc tenant disable`` (operator, platform path). A disabled
  tenant's users cannot log in or use the API and its numbers answer 404 (docs/api.md).
- ``lower_own_account_limit(int)``: the API role has SELECT on its own account row and no
  UPDATE (account changes are the operator's). This definer function is the one narrow
  exception: the current tenant (``app.current_account``) may lower its concurrency limit, or
  set one when it has none; raising it (or back to 0 = unlimited) stays an operator action.
  The rule lives here so no API bug can raise a limit the operator sold.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 22:50:00
"""
from __future__ import annotations

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa

revision: str = '0003'
down_revision: Union[str, Sequence[str], None] = '0002'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# frozen literal (0001's policy expression)
CURRENT_ACCOUNT = "NULLIF(current_setting('app.current_account', true), '')::uuid"


def upgrade() -> None:
    op.add_column('accounts', sa.Column('disabled_at', sa.DateTime(timezone=True), nullable=True))
    # FORCE'd RLS applies to the owner too: let the definer function below update rows
    op.execute("CREATE POLICY owner_update ON accounts FOR UPDATE TO CURRENT_USER USING (true) WITH CHECK (true)")
    op.execute(f"""
        CREATE OR REPLACE FUNCTION lower_own_account_limit(p_limit integer) RETURNS integer
        LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = pg_catalog, public
        AS $$
        DECLARE
            acct uuid := {CURRENT_ACCOUNT};
            current_limit integer;
        BEGIN
            IF acct IS NULL THEN
                RAISE EXCEPTION 'no tenant in this transaction' USING ERRCODE = '42501';
            END IF;
            SELECT max_concurrent_calls INTO current_limit FROM public.accounts
                WHERE id = acct AND disabled_at IS NULL FOR UPDATE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'account not found' USING ERRCODE = '42501';
            END IF;
            IF p_limit IS NULL OR p_limit < 0
               OR (current_limit <> 0 AND (p_limit = 0 OR p_limit > current_limit)) THEN
                RAISE EXCEPTION 'only the operator raises a concurrency limit' USING ERRCODE = '42501';
            END IF;
            UPDATE public.accounts SET max_concurrent_calls = p_limit WHERE id = acct;
            RETURN p_limit;
        END
        $$
    """)
    op.execute("REVOKE ALL ON FUNCTION lower_own_account_limit(integer) FROM PUBLIC")
    op.execute("GRANT EXECUTE ON FUNCTION lower_own_account_limit(integer) TO sbc_app")


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS lower_own_account_limit(integer)")
    op.execute("DROP POLICY IF EXISTS owner_update ON accounts")
    op.drop_column('accounts', 'disabled_at')
