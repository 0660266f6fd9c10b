"""callback scheduled_at: a callback is not dialled before this time (the console's Reschedule)

``callbacks.scheduled_at`` (nullable): null is "as soon as an agent of the queue is free", as
before; a time makes the dispatcher leave the callback alone until then. ``requested_at`` keeps
its meaning (when the customer asked, the dispatch order among equal priorities), so moving a
callback to later does not also move it behind everyone who asked after the customer.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 18:45:00
"""
from __future__ import annotations

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = '0018'
down_revision: Union[str, Sequence[str], None] = '0017'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column('callbacks', sa.Column('scheduled_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column('callbacks', 'scheduled_at')
