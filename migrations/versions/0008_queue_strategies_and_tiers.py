"""queues get a distribution strategy, a short-abandon threshold and a service-level target;
queue memberships get a tier

``queues.strategy`` picks how a waiting caller's agent is chosen (docs/agents.md
"Strategies"); ``short_abandon_seconds`` flags abandons under it (``shortAbandon`` on
``queue.caller.abandoned``); ``service_level_seconds`` is the answer target of
``queue.metrics``. ``agent_queues.tier``: lower tiers are offered first.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 02:00:00
"""
from __future__ import annotations

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa

revision: str = '0008'
down_revision: Union[str, Sequence[str], None] = '0007'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

STRATEGIES = "'longest_idle', 'round_robin', 'fewest_calls', 'ring_all'"


def upgrade() -> None:
    op.add_column('queues', sa.Column('strategy', sa.String(length=16), nullable=False,
                                      server_default=sa.text("'longest_idle'")))
    op.add_column('queues', sa.Column('short_abandon_seconds', sa.Integer(), nullable=False,
                                      server_default=sa.text('5')))
    op.add_column('queues', sa.Column('service_level_seconds', sa.Integer(), nullable=False,
                                      server_default=sa.text('20')))
    op.create_check_constraint(op.f('ck_queues_strategy_known'), 'queues', f'strategy IN ({STRATEGIES})')
    op.create_check_constraint(op.f('ck_queues_short_abandon_not_negative'), 'queues', 'short_abandon_seconds >= 0')
    op.create_check_constraint(op.f('ck_queues_service_level_positive'), 'queues', 'service_level_seconds > 0')
    op.add_column('agent_queues', sa.Column('tier', sa.Integer(), nullable=False, server_default=sa.text('1')))
    op.create_check_constraint(op.f('ck_agent_queues_tier_range'), 'agent_queues', 'tier BETWEEN 1 AND 9')


def downgrade() -> None:
    op.drop_constraint(op.f('ck_agent_queues_tier_range'), 'agent_queues', type_='check')
    op.drop_column('agent_queues', 'tier')
    for name in ('ck_queues_service_level_positive', 'ck_queues_short_abandon_not_negative',
                 'ck_queues_strategy_known'):
        op.drop_constraint(op.f(name), 'queues', type_='check')
    for column in ('service_level_seconds', 'short_abandon_seconds', 'strategy'):
        op.drop_column('queues', column)
