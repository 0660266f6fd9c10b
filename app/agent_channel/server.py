"""``GET /api/agents/me/channel``: the WebSocket upgrade and one socket's life.

The view runs in the upgrade request's greenlet for as long as the socket lives (gevent's
pywsgi gives each connection its own greenlet). It accepts the upgrade with simple-websocket
(wsproto underneath) on the request's own socket, waits for the auth message, attaches the
connection to this process's ``Hub``, then reads commands until the socket closes. What it
returns tells pywsgi that the response was already written (``ChannelDone``).

Authentication is the auth message, not a header (browsers cannot set headers on a
WebSocket): the same checks as REST (``app.api.security``): signature and expiry, the token's
tenant equals the Host's, the user and account re-read from the database; plus the
``queue-mgmt`` license and being an agent of the account.
"""
from __future__ import annotations

import contextlib
import logging
import time
import uuid
from typing import Any, Optional

import gevent
import gevent.lock
import jwt as pyjwt
import simple_websocket
from flask import Blueprint, Response, current_app, g, request
from flask_jwt_extended import decode_token
from flask_jwt_extended.exceptions import WrongTokenError
from flask_jwt_extended.internal_utils import verify_token_type
from sqlalchemy import select

from app import limits
from app.agent_channel import protocol
from app.agent_channel.commands import COMMANDS, CommandContext
from app.agent_channel.connection import AgentConnection
from app.agent_channel.hub import Hub
from app.agent_channel.protocol import ProtocolError
from app.agent_channel.rate import Clock, TokenBucket
from app.agent_channel.relay import start_relay
from app.api.security import close_request_session, load_identity
from app.api.tenancy import request_tenant
from app.errors import BadRequest, SbcError, ServiceUnavailable, Unauthorized
from app.models import Agent

log = logging.getLogger(__name__)

CHANNEL_PATH = "/api/agents/me/channel"
LICENSE = "queue-mgmt"
# how long the command loop waits for a frame before checking the socket's reader is alive
COMMAND_WAIT_SECONDS = 30.0
# environ key the API server reads to close the TCP connection after the socket's life
CHANNEL_DONE_KEY = "sbc.agent_channel.done"
# app.extensions key of the command bucket's clock (tests freeze it); default time.monotonic
CLOCK_EXTENSION = "agent_channel.clock"

blp = Blueprint("agent_channel", __name__)


def is_channel_path(path: str) -> bool:
    """The upgrade authenticates with its first message, not a header: the REST hook skips it."""
    return path == CHANNEL_PATH


class ChannelDone(Response):
    """The socket wrote everything itself: nothing more goes to the client (pywsgi writes no
    status line when the application never calls ``start_response``)."""

    def __call__(self, environ: dict, start_response: Any) -> list[bytes]:  # noqa: ARG002
        environ[CHANNEL_DONE_KEY] = True
        return []


class _Runtime:
    """This process's hub and relay consumer, started with the first socket."""

    def __init__(self) -> None:
        self.lock = gevent.lock.Semaphore()
        self.hub: Optional[Hub] = None
        self.relay = None

    def get(self) -> Hub:
        with self.lock:
            if self.hub is None:
                import redis

                from app.settings import get_settings

                settings = get_settings()
                hub = Hub(redis.Redis.from_url(settings.redis_url, socket_timeout=5), settings.redis_key_prefix,
                          listener=redis.Redis.from_url(settings.redis_url, health_check_interval=30))
                self.hub = hub.start()
                self.relay = start_relay(hub)
                self.relay.ready.wait(10)  # events from now on reach this process's sockets
            return self.hub

    def stop(self) -> None:
        if self.relay is not None:
            self.relay.stop()
        if self.hub is not None:
            self.hub.stop()


def runtime() -> _Runtime:
    return current_app.extensions.setdefault("agent_channel", _Runtime())


@blp.get(CHANNEL_PATH)
def not_a_websocket() -> Response:
    """Werkzeug routes WebSocket upgrades and plain requests apart: this is the plain one."""
    raise BadRequest("This path is a WebSocket: send 'Upgrade: websocket'.", code="websocket_required")


@blp.route(CHANNEL_PATH, methods=["GET"], websocket=True)
def channel() -> Response:
    request_tenant()  # a host with no tenant is refused before the upgrade (400 tenant_required)
    try:
        ws = simple_websocket.Server.accept(request.environ, ping_interval=limits.AGENT_CHANNEL_PING_SECONDS,
                                            max_message_size=limits.AGENT_CHANNEL_MAX_MESSAGE_BYTES)
    except Exception as exc:  # a broken handshake (bad key or version): nothing was upgraded
        log.info("agent channel: upgrade refused (%s)", exc)
        raise BadRequest("The WebSocket handshake is invalid.", code="websocket_required") from None
    try:
        _serve(ws)
    except Exception:  # Redis or the database failed mid-way: the socket is upgraded, so no 500
        log.exception("agent channel: the socket failed")
        _reject(ws, protocol.INTERNAL_ERROR, "The channel failed; reconnect.", protocol.CLOSE_INTERNAL_ERROR)
    finally:
        _finish(ws)
    return ChannelDone()


def _serve(ws: simple_websocket.Server) -> None:
    conn = _authenticate(ws)
    if conn is None:
        return
    hub = runtime().get()
    hub.attach(conn)
    log.info("agent channel %s: agent %s of account %s connected", conn.session_id, conn.agent_id, conn.account_id)
    try:
        conn.send(protocol.message("connection", state="open", agentId=conn.agent_id,
                                   sessionId=conn.session_id, protocol=protocol.PROTOCOL_VERSION))
        _send_current_state(conn)
        _command_loop(ws, conn, hub)
    finally:
        hub.detach(conn)
        conn.close(protocol.CLOSE_NORMAL)
        conn.wait_closed()
        log.info("agent channel %s: closed (%s)", conn.session_id, conn.close_code)


def _finish(ws: simple_websocket.Server) -> None:
    """Let the reader see the peer's close reply, then make sure the socket is gone."""
    ws.connected = False
    ws.thread.join(2)
    if ws.thread.is_alive():
        with contextlib.suppress(OSError):  # the reader closed it meanwhile
            ws.sock.close()
        ws.thread.join(1)
    close_request_session()


def _receive(ws: simple_websocket.Server, timeout: Optional[float]) -> Any:
    """The next frame, None on timeout; raises ConnectionClosed when the socket is gone
    (also when wsproto's reader greenlet died on a frame it could not parse)."""
    if not ws.thread.is_alive() and not ws.input_buffer:
        raise simple_websocket.ConnectionClosed()
    return ws.receive(timeout=timeout)


def _reject(ws: simple_websocket.Server, code: str, text: str, close_code: int, details: Any = None) -> None:
    with contextlib.suppress(Exception):  # the peer is gone already: nothing to tell it
        ws.send(protocol.encode(protocol.error(code, text, details)))
        ws.close(close_code, text[:120])


def _authenticate(ws: simple_websocket.Server) -> Optional[AgentConnection]:
    try:
        frame = _receive(ws, limits.AGENT_CHANNEL_AUTH_TIMEOUT_SECONDS)
    except simple_websocket.ConnectionClosed:
        return None
    if frame is None:
        _reject(ws, protocol.AUTH_TIMEOUT, "Send {\"type\": \"auth\", \"token\": ...} first.",
                protocol.CLOSE_AUTH_TIMEOUT)
        return None
    try:
        body = protocol.parse(frame)
        if body["type"] != "auth" or not isinstance(body.get("token"), str):
            raise ProtocolError(protocol.AUTH_REQUIRED, "The first message must be {\"type\": \"auth\", \"token\": ...}.")
        return _connection_for(ws, body["token"])
    except ProtocolError as exc:
        _reject(ws, exc.code, exc.message, protocol.CLOSE_AUTH_FAILED, exc.details)
    except SbcError as exc:
        _reject(ws, exc.code, exc.message, protocol.CLOSE_AUTH_FAILED)
    except Exception:
        log.exception("agent channel: authentication failed unexpectedly")
        _reject(ws, protocol.INTERNAL_ERROR, "Authentication failed; try again.", protocol.CLOSE_AUTH_FAILED)
    finally:
        close_request_session()  # the socket holds no database connection while it lives
    return None


def _claims(token: str) -> dict[str, Any]:
    """The token's claims, checked as REST's ``verify_jwt_in_request`` checks them: signature,
    expiry, and the token type (a refresh token is refused: REST answers it 401
    ``invalid_token`` through the library's ``WrongTokenError``, so does the channel)."""
    try:
        claims = decode_token(token)
        verify_token_type(claims, refresh=False)
        return claims
    except pyjwt.ExpiredSignatureError:
        raise Unauthorized("The token has expired; log in again.", code="token_expired") from None
    except WrongTokenError:
        raise Unauthorized("The token is not valid.", code="invalid_token") from None
    except Exception:  # any other decode failure: signature, format, claims
        raise Unauthorized("The token is not valid.", code="invalid_token") from None


def _uuid_claim(claims: dict[str, Any], name: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(claims[name]))
    except (KeyError, ValueError):
        raise Unauthorized("The token is not valid.", code="invalid_token") from None


def _connection_for(ws: simple_websocket.Server, token: str) -> AgentConnection:
    claims = _claims(token)
    tenant = request_tenant()
    if claims.get("tenant") != tenant:
        raise Unauthorized("This token was issued for another tenant.", code="tenant_mismatch")
    session_kind = claims.get("session")
    if session_kind not in ("admin", "agent"):
        raise Unauthorized("The token is not valid.", code="invalid_token")
    identity = _identity(_uuid_claim(claims, "acct"), _uuid_claim(claims, "sub"), session_kind, tenant,
                         claims)
    db = g.sbc_db
    agent_id = db.scalar(select(Agent.id).where(Agent.user_id == identity.user_id,
                                                Agent.account_id == identity.account_id))
    db.commit()
    if agent_id is None:
        raise SbcError("You are not an agent of this account.", code="not_an_agent")
    return AgentConnection(ws=ws, account_id=str(identity.account_id), agent_id=str(agent_id),
                           user_id=str(identity.user_id), session_kind=session_kind, subdomain=tenant,
                           token_claims=claims)


def _identity(account_id: uuid.UUID, user_id: uuid.UUID, session_kind: str, tenant: str,
              claims: dict[str, Any]):
    """The REST identity checks (revocation included), fresh from the database, plus the
    license; sets ``g``."""
    identity = load_identity(account_id, user_id, session_kind, tenant, claims=claims)
    if LICENSE not in identity.licenses:
        raise SbcError(f"The account has no '{LICENSE}' license.", code="license_required")
    g.sbc_identity = identity
    return identity


def _send_current_state(conn: AgentConnection) -> None:
    from app.api.security import tenant_db

    with tenant_db() as db:
        agent = db.scalar(select(Agent).where(Agent.id == uuid.UUID(conn.agent_id),
                                              Agent.account_id == uuid.UUID(conn.account_id)))
        if agent is not None:
            conn.send(protocol.message("state", state=agent.state, reason=agent.state_reason,
                                       previousState=None,
                                       changedAt=protocol.rfc3339(agent.state_changed_at)
                                       if agent.state_changed_at else None))
    close_request_session()


def _command_clock() -> Clock:
    return current_app.extensions.get(CLOCK_EXTENSION, time.monotonic)


def _command_loop(ws: simple_websocket.Server, conn: AgentConnection, hub: Hub) -> None:
    ctx = CommandContext(conn=conn, hub=hub)
    bucket = TokenBucket(limits.AGENT_CHANNEL_COMMANDS_PER_SECOND, limits.AGENT_CHANNEL_COMMAND_BURST,
                         clock=_command_clock())
    strikes = 0  # frames refused in a row for the rate limit
    while not conn.closed:
        try:
            # a bounded wait: a reader greenlet that died without waking us is noticed
            frame = _receive(ws, COMMAND_WAIT_SECONDS)
        except simple_websocket.ConnectionClosed:
            return
        if frame is None:  # a quiet socket: is the agent still allowed in?
            try:
                _still_authorised(conn)
            except SbcError:
                return
            except Exception:  # the database is away: keep serving, check again next time
                log.warning("agent channel %s: identity not re-checked", conn.session_id, exc_info=True)
            continue
        if not bucket.take():  # before any parsing or database work: a flood costs little
            strikes += 1
            conn.send(_rate_limited(frame))
            if strikes >= limits.AGENT_CHANNEL_RATE_STRIKES:
                log.warning("agent channel %s: over the command rate limit, closing", conn.session_id)
                conn.close(protocol.CLOSE_RATE_LIMITED, "too many commands")
                return
            continue
        strikes = 0
        conn.send(_answer(ctx, frame))


def _rate_limited(frame: Any) -> dict[str, Any]:
    """The answer to a frame over the socket's command budget: nothing of it is done."""
    text = (f"Too many commands: at most {limits.AGENT_CHANNEL_COMMANDS_PER_SECOND:g} a second "
            f"(bursts of {limits.AGENT_CHANNEL_COMMAND_BURST}); slow down.")
    command_id = protocol.readable_id(frame)
    if command_id is None:
        return protocol.error(protocol.RATE_LIMITED, text)
    return protocol.nack(command_id, protocol.RATE_LIMITED, text)


def _still_authorised(conn: AgentConnection) -> None:
    """The REST identity checks again: a user deactivated (or deleted), an account disabled or
    a license withdrawn, or the session signed out (revoked) since the login gets the error and
    close 4003. When Redis cannot say whether the session was revoked, an open socket (checked
    when it opened) is kept and checked again next time: closing 4003 would end every agent's
    channel for good (the SDK does not reconnect after 4003) over a cache blip; a new socket,
    and REST, are refused meanwhile (fail closed, docs/api.md "Sessions and revocation")."""
    try:
        _identity(uuid.UUID(conn.account_id), uuid.UUID(conn.user_id), conn.session_kind, conn.subdomain,
                  conn.token_claims)
    except ServiceUnavailable as exc:
        log.warning("agent channel %s: identity not re-checked (%s); kept open", conn.session_id, exc.code)
    except SbcError as exc:
        conn.send(protocol.error(exc.code, exc.message))
        conn.close(protocol.CLOSE_AUTH_FAILED, "no longer authorised")
        raise
    finally:
        close_request_session()


def _answer(ctx: CommandContext, frame: Any) -> dict[str, Any]:
    """One command → its ack (or an ``error`` when the frame has no usable id)."""
    command_id = None
    try:
        body = protocol.parse(frame)
        command_id = body.get("id")
        handler = COMMANDS.get(body["type"])
        if handler is None:
            raise ProtocolError(protocol.UNKNOWN_COMMAND, f"Unknown command type; one of: {', '.join(COMMANDS)}.")
        if not ctx.hub.is_owner(ctx.conn):
            ctx.conn.takeover()
            raise ProtocolError("taken_over", "A newer connection of this agent took over.")
        _still_authorised(ctx.conn)
        extra = handler(ctx, body)
        return protocol.ack(command_id, **extra)
    except (ProtocolError, SbcError) as exc:
        command_id = command_id or getattr(exc, "command_id", None)
        if command_id is None:
            return protocol.error(exc.code, exc.message, exc.details)
        return protocol.nack(command_id, exc.code, exc.message, exc.details)
    except Exception:
        log.exception("agent channel %s: command failed", ctx.conn.session_id)
        if command_id is None:
            return protocol.error(protocol.INTERNAL_ERROR, "The command failed; try again.")
        return protocol.nack(command_id, protocol.INTERNAL_ERROR, "The command failed; try again.")
    finally:
        close_request_session()
