"""/api/users CRUD (admin session)."""
from __future__ import annotations

import uuid
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from app.api.auth import mfa
from app.api.common import ListQuerySchema, flush_or_raise, page_schema, require_admin
from app.api.errors import ErrorSchema
from app.api.security import current_identity, session_revocations, tenant_db
from app.api.sso import config as sso_config
from app.api.sso.schemas import SsoLinkSchema, SsoLinkWriteSchema
from app.api.users import service
from app.api.users.schemas import UserPatchSchema, UserSchema, UserWriteSchema

blp = Blueprint("users", __name__, url_prefix="/api/users", description="Users")


@blp.route("")
class Users(MethodView):
    @require_admin
    @blp.arguments(ListQuerySchema, location="query")
    @blp.response(200, page_schema(UserSchema))
    def get(self, query: dict[str, Any]):
        with tenant_db() as db:
            page = service.list_page(db, current_identity().account_id, cursor=query["cursor"], limit=query["limit"])
        return page.to_dict(page.items)

    @require_admin
    @blp.arguments(UserWriteSchema)
    @blp.response(201, UserSchema)
    def post(self, data: dict[str, Any]):
        """Create a user; the password is stored as a bcrypt hash only."""
        with tenant_db() as db:
            return service.create(db, current_identity().account_id, data)


@blp.route("/<uuid:user_id>")
class UserById(MethodView):
    @require_admin
    @blp.response(200, UserSchema)
    def get(self, user_id: uuid.UUID):
        with tenant_db() as db:
            return service.get(db, current_identity().account_id, user_id)

    @require_admin
    @blp.arguments(UserPatchSchema(partial=True))
    @blp.response(200, UserSchema)
    @blp.alt_response(503, schema=ErrorSchema, description="session_store_unavailable: nothing saved")
    def patch(self, data: dict[str, Any], user_id: uuid.UUID):
        """A new password or role signs the user out everywhere (the caller too, if it is them)."""
        me = current_identity()
        revocations = session_revocations()
        ended: list[uuid.UUID] = []

        def end_sessions(uid: uuid.UUID) -> None:
            revocations.revoke_user(uid)  # before the commit: Redis down → 503, nothing saved
            ended.append(uid)

        with tenant_db() as db:
            row = service.update(db, me.account_id, me.user_id, user_id, data, before_commit=end_sessions)
        for uid in ended:
            # again after the commit: a login with the old password between the first cut-off
            # and the commit must not survive either
            revocations.revoke_user(uid)
        return row

    @require_admin
    @blp.response(204)
    def delete(self, user_id: uuid.UUID):
        me = current_identity()
        with tenant_db() as db:
            service.delete(db, me.account_id, me.user_id, user_id)
        return None


@blp.route("/<uuid:user_id>/sessions")
class UserSessions(MethodView):
    @require_admin
    @blp.response(204)
    @blp.alt_response(503, schema=ErrorSchema, description="session_store_unavailable: nobody signed out")
    def delete(self, user_id: uuid.UUID):
        """Sign the user out everywhere: every login token issued to them until now stops working.

        API keys they created are not sessions and keep working (revoke those separately)."""
        with tenant_db() as db:
            service.get(db, current_identity().account_id, user_id)  # 404 user_not_found
        session_revocations().revoke_user(user_id)
        return None


@blp.route("/<uuid:user_id>/mfa")
class UserMfa(MethodView):
    @require_admin
    @blp.response(204)
    @blp.alt_response(503, schema=ErrorSchema, description="session_store_unavailable: nothing reset")
    def delete(self, user_id: uuid.UUID):
        """Reset the user's second factor (a lost device): secret and recovery codes forgotten,
        and the user signed out everywhere. Their next login enrols again if the account
        requires it, or signs in with the password alone."""
        revocations = session_revocations()
        with tenant_db() as db:
            row = service.get_for_update(db, current_identity().account_id, user_id)
            mfa.reset(db, row)
            revocations.revoke_user(row.id)
        revocations.revoke_user(user_id)
        return None


@blp.route("/<uuid:user_id>/sso")
class UserSso(MethodView):
    @require_admin
    @blp.arguments(SsoLinkWriteSchema)
    @blp.response(200, SsoLinkSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="user_not_found, sso_not_configured")
    @blp.alt_response(409, schema=ErrorSchema, description="sso_subject_taken: another user of the account has it")
    def put(self, data: dict[str, Any], user_id: uuid.UUID):
        """Link an existing user to a person at the account's identity provider (docs/sso.md
        "Who is who"): their single sign-on then opens this user, with its role and history.

        Single sign-on never links by e-mail or name by itself; this is the admin's decision."""
        me = current_identity()
        with tenant_db() as db:
            provider = sso_config.get(db, me.account_id)
            row = service.get_for_update(db, me.account_id, user_id)
            row.sso_issuer, row.sso_subject = provider.issuer, data["subject"]
            flush_or_raise(db, conflict="Another user of the account is linked to this subject.",
                           conflict_code="sso_subject_taken")
            return {"issuer": row.sso_issuer, "subject": row.sso_subject}

    @require_admin
    @blp.response(204)
    @blp.alt_response(404, schema=ErrorSchema, description="user_not_found")
    def delete(self, user_id: uuid.UUID):
        """Unlink: the person's next single sign-on no longer opens this user (their current
        sessions are not ended; DELETE /api/users/{id}/sessions does that)."""
        me = current_identity()
        with tenant_db() as db:
            row = service.get_for_update(db, me.account_id, user_id)
            row.sso_issuer = row.sso_subject = None
            db.flush()
        return None
