"""Who may see and change a queue's callbacks (docs/api.md "Queue callbacks": who).

A callback holds a customer's number and notes, and creating one makes the platform dial any
number at the account's cost. Before, the license was the only check: an agent session, or a
key an agent made, could read every queue's callbacks, create callbacks to any number and
cancel them all, while the same agent gets 403 on ``/api/queues``. The rules now follow the
rest of the contact-centre API:

* **Create**: an ``admin`` user in an admin session, as for ``POST /api/calls``
  (``app.api.common.require_admin``: 403 ``admin_required``), so only who may place calls may
  have the platform dial a new number.
* **Act on the existing ones** (reschedule, cancel one, cancel all) and **read** (list, one):
  users of role ``admin`` or ``supervisor`` (any session: the roles that may supervise any call
  of the account, and run the queues' day) on every queue; an agent changes nothing
  (``app.api.common.require_supervisor``: 403 ``supervisor_required``). Reads: anyone else
  sees only the callbacks of a queue their agent profile is a member of (the agents the dispatcher connects
  to those customers), else 403 ``not_a_queue_member``, whether or not the queue exists, so
  queue ids are not probed.

API keys act as their creator in an admin session (docs/api.md "API keys as credentials"), so
an agent's key reads like the agent and changes nothing.
"""
from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.api.common import SUPERVISOR_ROLES
from app.api.security import Identity
from app.errors import Forbidden
from app.models import Agent, AgentQueue


def require_reader(db: Session, me: Identity, queue_id: uuid.UUID) -> None:
    """403 ``not_a_queue_member`` unless ``me`` may read the queue's callbacks."""
    if me.role in SUPERVISOR_ROLES:
        return
    member = db.scalar(
        select(AgentQueue.queue_id)
        .join(Agent, (Agent.id == AgentQueue.agent_id) & (Agent.account_id == AgentQueue.account_id))
        .where(Agent.account_id == me.account_id, Agent.user_id == me.user_id,
               AgentQueue.queue_id == queue_id))
    if member is None:
        raise Forbidden("Only an administrator, a supervisor or an agent of this queue can see "
                        "its callbacks.", code="not_a_queue_member",
                        details={"roles": sorted(SUPERVISOR_ROLES)})
