"""A TCP relay between the publisher and the real RabbitMQ, to cut the path on demand.

Not a broker double: every byte goes to and from the real broker. It only simulates the network
failing — ``blackhole()`` keeps sockets open but silently drops traffic (a partition: no RST,
the worst case for a client), ``reset()`` closes every relayed connection, ``heal()`` restores.
"""
from __future__ import annotations

import contextlib
import socket

import gevent
from gevent.server import StreamServer


class TcpProxy:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.mode = "forward"
        self._cut_budget: int | None = None
        self.cuts = 0
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._server = StreamServer(("127.0.0.1", 0), self._handle)

    def start(self) -> "TcpProxy":
        self._server.start()
        return self

    @property
    def port(self) -> int:
        return self._server.server_port

    def cut_after(self, nbytes: int) -> None:
        """Reset every connection once ``nbytes`` more client->broker bytes were relayed:
        a deterministic cut in the middle of a stream (even mid-frame)."""
        self._cut_budget = nbytes

    def blackhole(self) -> None:
        self.mode = "blackhole"

    def refuse(self) -> None:
        """The service is down: new connections are closed at once (call ``reset()`` too to
        drop the open ones)."""
        self.mode = "refuse"

    def heal(self) -> None:
        self.mode = "forward"

    def reset(self) -> None:
        for a, b in self._pairs:
            for s in (a, b):
                with contextlib.suppress(OSError):  # already closed by its pump: nothing to cut
                    s.close()
        self._pairs.clear()

    def stop(self) -> None:
        self.reset()
        self._server.stop(timeout=1)

    def _handle(self, client: socket.socket, _addr) -> None:
        if self.mode == "refuse":
            client.close()
            return
        try:
            upstream = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            client.close()
            return
        pair = (client, upstream)
        self._pairs.append(pair)
        jobs = [gevent.spawn(self._pump, client, upstream, True),
                gevent.spawn(self._pump, upstream, client, False)]
        gevent.joinall(jobs)
        for s in pair:
            with contextlib.suppress(OSError):  # already closed by reset(): nothing left to close
                s.close()
        if pair in self._pairs:
            self._pairs.remove(pair)

    def _pump(self, src: socket.socket, dst: socket.socket, outbound: bool) -> None:
        try:
            # either side reset, or reset() closed the pair: the relayed connection ends like EOF
            with contextlib.suppress(OSError):
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    if outbound and self._cut_budget is not None:
                        if len(data) >= self._cut_budget:
                            dst.sendall(data[: self._cut_budget])
                            self._cut_budget = None
                            self.cuts += 1
                            self.reset()
                            break
                        self._cut_budget -= len(data)
                    if self.mode == "forward":
                        dst.sendall(data)
                    # blackhole: read and drop, like packets lost in a partition
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):  # already closed or not connected: nothing to shut
                    s.shutdown(socket.SHUT_RDWR)
