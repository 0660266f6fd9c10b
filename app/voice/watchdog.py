"""Node watchdog: notice a FreeSWITCH that hangs with its TCP connections still open.

Why: TCP keepalive only catches a host that vanished. A FreeSWITCH process that is hung (a
deadlock, a stuck module, SIGSTOP) still has a kernel that acknowledges every segment, so the
inbound link looks healthy and each call session keeps waiting for an execute completion or a
hang-up that will never come: the caller sits in dead air and the call holds a concurrency
slot forever. So one greenlet per node asks ``api status`` at a steady pace; a switch that
stays silent for several probes in a row is declared frozen: the ``on_frozen`` callback closes
the outbound sockets of that node's calls (each session ends through its ``ConnectionLost``
path: ``call.failed`` ``connection_lost``, slot released) and the inbound socket is dropped, so
the existing supervisor reconnects; its auth cannot complete until the switch answers again,
and then the usual reconciliation runs.

Timing (defaults below): a probe every 10 s with a 5 s timeout, frozen after 3 silent probes
in a row — declared 35 to 45 s after the hang (the first missed probe starts up to one
interval after it, then each of the three waits its timeout with an interval between them).
``api status`` is answered by FreeSWITCH's ESL thread without touching any channel, in
milliseconds on an idle switch and well under a second on a busy one; 5 s leaves room for a
switch that is loaded but working (CPU saturated by a call burst, a slow disk flushing
recordings, our probe queued behind a slower ``api`` on the same FIFO link, e.g. a gateway
status sweep). One or two slow answers are therefore normal and must cost nothing; only
silence across half a minute, far longer than any of those stalls, says the process is hung.
Any reply, even ``-ERR``, proves the event loop runs, so only silence counts as a strike. A
node that is not connected is not probed: the supervisor is already on it.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Optional

import gevent

from esl.errors import CommandTimeout, ConnectionLost
from esl.greenlet_task import GreenletTask
from esl.inbound import InboundConnection

log = logging.getLogger(__name__)

PROBE_INTERVAL_SECONDS = 10.0
PROBE_TIMEOUT_SECONDS = 5.0
FROZEN_AFTER_STRIKES = 3
PROBE_COMMAND = "status"

FrozenCallback = Callable[[], None]


class NodeWatchdog(GreenletTask):
    """Liveness probe of one FreeSWITCH node's inbound link. ``start()``, then ``stop()``."""

    def __init__(self, node: InboundConnection, on_frozen: Optional[FrozenCallback] = None, *,
                 interval: float = PROBE_INTERVAL_SECONDS, timeout: float = PROBE_TIMEOUT_SECONDS,
                 strikes: int = FROZEN_AFTER_STRIKES) -> None:
        self.node = node
        self.on_frozen = on_frozen
        self.interval = interval
        self.timeout = timeout
        self.strikes = strikes
        self.frozen_count = 0  # times this node was declared frozen
        self.probes = 0

    # -- internals -----------------------------------------------------------------------------
    def _run(self) -> None:
        missed = 0
        link = self.node.reconnects
        while True:
            self.node.connected_event.wait()
            gevent.sleep(self.interval)
            if self.node.reconnects != link:
                # The switch answered a fresh auth since those misses: they say nothing now.
                missed, link = 0, self.node.reconnects
            if not self.node.connected:
                missed = 0
                continue
            missed = missed + 1 if self._silent() else 0
            if missed >= self.strikes:
                self._declare_frozen(missed)
                missed = 0

    def _silent(self) -> bool:
        """One probe: True when the switch did not answer within the timeout."""
        self.probes += 1
        try:
            self.node.api(PROBE_COMMAND, timeout=self.timeout)
        except CommandTimeout:
            return True
        except ConnectionLost:  # the link went away meanwhile: the supervisor handles that
            return False
        return False

    def _declare_frozen(self, missed: int) -> None:
        self.frozen_count += 1
        log.error("FreeSWITCH %s:%s is frozen: no answer to 'api %s' in %d probes (%.0fs timeout "
                  "each); ending its calls and dropping the link", self.node.host, self.node.port,
                  PROBE_COMMAND, missed, self.timeout)
        if self.on_frozen is not None:
            try:
                self.on_frozen()
            except Exception:  # the link must still be dropped, and the watchdog must live on
                log.exception("on_frozen callback failed for %s:%s", self.node.host, self.node.port)
        self.node.drop()

