"""One HTTP(S) exchange with a pre-checked address: the only place that opens webhook sockets.

urllib3 is used directly (not requests) because the pool can be built for the *checked IP*
while SNI and certificate verification use the *original host name* (``server_hostname`` /
``assert_hostname``): no second DNS lookup, so DNS rebinding between check and connect is
impossible. Being plain urllib3 there are no environment proxies (nothing reads HTTP_PROXY),
no redirects (``redirect=False``) and no hidden retries (``retries=False``); the client owns
the retry policy.
"""
from __future__ import annotations

import ssl
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Mapping

import gevent
import urllib3
from urllib3 import exceptions as u3

from app.webhooks.errors import Reason
from app.webhooks.url_guard import Destination

_CHUNK = 64 * 1024


@dataclass(frozen=True)
class RawResponse:
    status: int
    body: bytes
    elapsed: float


class AttemptError(Exception):
    """One attempt failed; ``reason`` is a :class:`Reason` code."""

    def __init__(self, reason: str, status: int | None = None, detail: str = "") -> None:
        super().__init__(detail or reason)
        self.reason = reason
        self.status = status
        self.detail = detail


class PinnedTransport:
    """Keeps a few keep-alive pools keyed by (scheme, checked IP, port, host name).

    Reuse is safe: a pool only ever talks to the address that was checked for that key.
    """

    def __init__(self, *, ca_bundle: str | None = None, max_pools: int = 32,
                 connections_per_pool: int = 4) -> None:
        self._ca_bundle = ca_bundle
        self._max_pools = max_pools
        self._per_pool = connections_per_pool
        self._pools: OrderedDict[tuple, urllib3.HTTPConnectionPool] = OrderedDict()
        self._lock = threading.Lock()

    def _pool(self, dest: Destination) -> urllib3.HTTPConnectionPool:
        key = (dest.scheme, str(dest.ip), dest.port, dest.host)
        with self._lock:
            pool = self._pools.get(key)
            if pool is not None:
                self._pools.move_to_end(key)
                return pool
            common = dict(host=str(dest.ip), port=dest.port, maxsize=self._per_pool,
                          block=False, retries=False)
            if dest.secure:
                pool = urllib3.HTTPSConnectionPool(
                    **common,
                    cert_reqs="CERT_REQUIRED",
                    ca_certs=self._ca_bundle,
                    server_hostname=dest.host,   # SNI
                    assert_hostname=dest.host,   # certificate must name the original host
                    ssl_minimum_version=ssl.TLSVersion.TLSv1_2,
                )
            else:
                pool = urllib3.HTTPConnectionPool(**common)
            self._pools[key] = pool
            while len(self._pools) > self._max_pools:
                _, old = self._pools.popitem(last=False)
                old.close()
            return pool

    def request(self, dest: Destination, method: str, target: str, headers: Mapping[str, str],
                body: bytes | None, *, timeout: float, max_bytes: int) -> RawResponse:
        """Send once; return status and body, or raise AttemptError. ``timeout`` bounds the whole
        attempt (connect + TLS + request + full body), not just each socket operation, so a
        server that drips one byte at a time cannot hold a call past the budget."""
        pool = self._pool(dest)
        started = time.monotonic()
        deadline = gevent.Timeout(timeout)
        deadline.start()
        response = None
        try:
            response = pool.urlopen(
                method, target, body=body, headers=dict(headers), redirect=False,
                retries=False, assert_same_host=False, preload_content=False,
                decode_content=False,   # we ask for identity; never inflate a gzip bomb
                timeout=urllib3.Timeout(connect=timeout, read=timeout),
            )
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise AttemptError(Reason.TOO_LARGE, response.status,
                                   f"declared {declared} bytes")
            chunks: list[bytes] = []
            size = 0
            while True:
                chunk = response.read(_CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > max_bytes:
                    raise AttemptError(Reason.TOO_LARGE, response.status,
                                       f"more than {max_bytes} bytes")
                chunks.append(chunk)
            status = response.status
            response.release_conn()
            response = None
            return RawResponse(status=status, body=b"".join(chunks),
                               elapsed=time.monotonic() - started)
        except gevent.Timeout as fired:
            if fired is not deadline:
                raise
            raise AttemptError(Reason.TIMEOUT, None, f"no complete reply in {timeout}s") from None
        except u3.NewConnectionError as exc:   # subclasses ConnectTimeoutError: test it first
            raise AttemptError(Reason.CONNECTION, None, type(exc).__name__) from None
        except (u3.ConnectTimeoutError, u3.ReadTimeoutError) as exc:
            raise AttemptError(Reason.TIMEOUT, None, type(exc).__name__) from None
        except u3.SSLError as exc:
            raise AttemptError(Reason.TLS, None, _short(exc)) from None
        except (u3.HTTPError, OSError) as exc:
            raise AttemptError(Reason.CONNECTION, None, type(exc).__name__) from None
        finally:
            deadline.cancel()
            if response is not None:   # failed mid-body: never reuse a half-read connection
                response.close()
                response.release_conn()

    def close(self) -> None:
        with self._lock:
            for pool in self._pools.values():
                pool.close()
            self._pools.clear()


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text[:200]
