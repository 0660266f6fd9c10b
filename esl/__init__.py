"""Event Socket layer: wire protocol, inbound and outbound connections (see each module)."""
from esl.errors import (
                        AuthenticationFailed,
                        ChannelHungUp,
                        CommandFailed,
                        CommandTimeout,
                        ConnectionLost,
                        EslError,
                        NotConnected,
)
from esl.protocol import Event, Frame, FrameParser, parse_event_plain

__all__ = [
    "AuthenticationFailed", "ChannelHungUp", "CommandFailed", "CommandTimeout", "ConnectionLost",
    "EslError", "NotConnected", "Event", "Frame", "FrameParser", "parse_event_plain",
]
