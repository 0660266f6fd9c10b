"""Typed ESL failures, so callers can tell a caller hang-up from a dead socket or a slow switch."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # pragma: no cover
    from esl.protocol import Event


class EslError(Exception):
    """Base class for everything raised by the esl package."""


class ConnectionLost(EslError):
    """The socket closed (or was closed) while a command or application was pending."""


class NotConnected(ConnectionLost):
    """A command was attempted on a connection that is not (or no longer) open."""


class CommandTimeout(EslError, TimeoutError):
    """No reply/completion within the timeout. The connection stays usable; a late reply is discarded."""


class AuthenticationFailed(EslError):
    """Inbound ``auth`` was refused (wrong password or ACL rude-rejection)."""


class CommandFailed(EslError):
    """FreeSWITCH answered ``-ERR ...`` to a command whose failure the caller cannot ignore."""

    def __init__(self, command: str, reply: str) -> None:
        super().__init__(f"{command.split(' ', 1)[0]}: {reply.strip()}")
        self.command = command
        self.reply = reply


class ChannelHungUp(EslError):
    """The channel hung up before the awaited application completed.

    ``event`` is the CHANNEL_HANGUP event (Hangup-Cause, variables such as
    ``originate_disposition`` for a failed bridge) when it was seen, else None
    (e.g. the socket closed first).
    """

    def __init__(self, event: Optional["Event"] = None, message: str = "channel hung up") -> None:
        cause = event.get("Hangup-Cause") if event is not None else None
        super().__init__(f"{message} ({cause})" if cause else message)
        self.event = event
        self.cause = cause
