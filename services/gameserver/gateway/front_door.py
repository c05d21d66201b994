"""The gateway's own front door against slow and huge requests, where no proxy stands in front.

uvicorn bounds some of it (``timeout_keep_alive`` for idle connections, ``limit_concurrency``
for every connection of a worker: 503 past it), but not a client that connects and sends a
header a byte at a time, a header of 100 MB, ten thousand header lines, a body that never
ends, or twenty thousand half-open connections from one address. `GuardedHttpTools` is
uvicorn's httptools protocol with those bounds (`FrontDoor`):

| bound (``RENATURE_<FIELD>`` of the settings' `FrontDoor`) | default | answer |
|---|---|---|
| ``HEADER_TIMEOUT_S``: the head, from connect or the last answer | 10 s | 408, closed |
| ``BODY_TIMEOUT_S``: the body, from the end of the head | 30 s | 408, closed |
| ``MAX_HEADER_BYTES``: the head's size | 32 KiB | 431, closed |
| ``MAX_HEADERS``: header lines | 64 | 431, closed |
| ``CONNECTIONS_PER_ADDRESS``: open per client address and worker | 64 | 429, closed |
| ``MAX_CONNECTIONS``: open per worker | 4096 | 503 (uvicorn) |
| ``KEEP_ALIVE_S``: idle between requests | 5 s | closed (uvicorn) |

The answers are the API's error shape (``{"error": {"code", "message"}}``) with
``Connection: close``.

A spectator's WebSocket handshake (``GET /games/{id}/live`` with no token) from an address or
to a game that this worker refused before and told to come back later
(`gateway.live_admission.LiveRefusals`, handed to the protocol with `set_up`) is answered 429
with its ``Retry-After`` here, before uvicorn makes a WebSocket protocol and the app's
middlewares see it: the same answer the app gives from the same memory, at a fraction of the
cost, for a flood of spectators' sockets re-opened as fast as they are refused.

Connections from a trusted proxy (``RENATURE_TRUSTED_PROXIES``) are not
counted per address: the proxy's address is everyone's, and the proxy keeps its own per-client
limits (infra/nginx). A connection upgraded to a WebSocket leaves this count for the live
channel's own leases (`gateway.ratelimit`).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, ClassVar

import httptools
import msgspec
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from gameserver.gateway.client_address import TrustedNetworks
from gameserver.gateway.live_admission import LiveRefusals, too_many_message
from gameserver.gateway.live_frames import FramesAtOnce
from gameserver.gateway.ratelimit import bearer_token
from gameserver.gateway.refusal_memory import Refused
from gameserver.runtime.settings_parts import FrontDoor

__all__ = ["FrontDoor", "GuardedHttpTools", "uvicorn_options"]

_REASONS = {
    408: "Request Timeout",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
}


_LIVE = re.compile(r"^/games/([^/]+)/live$")


def uvicorn_options(bounds: FrontDoor) -> dict[str, Any]:
    """What uvicorn bounds itself (with `GuardedHttpTools` as its protocol)."""
    return {
        "http": GuardedHttpTools,
        "ws": FramesAtOnce,  # a move's events in one write (gateway.live_frames)
        "ws_per_message_deflate": False,  # frames as written: see gateway.live_frames
        "timeout_keep_alive": bounds.keep_alive_s,
        "limit_concurrency": bounds.max_connections,
        "h11_max_incomplete_event_size": bounds.max_header_bytes,
        "proxy_headers": False,  # gateway.client_address decides whom to believe
    }


class _HeadersRefused(Exception):
    """Raised inside the parser's header callback: too many header lines."""


class GuardedHttpTools(HttpToolsProtocol):  # long: uvicorn's protocol and five bounds on it
    """uvicorn's httptools protocol with the bounds of `FrontDoor` (module docstring).

    Its bounds and trusted proxies are the settings' `FrontDoor`: `gateway.server` sets them
    in each worker process (`set_up`), tests on a class of their own (`configured`)."""

    front_door: ClassVar[FrontDoor] = FrontDoor()
    trusted: ClassVar[TrustedNetworks] = TrustedNetworks()
    open_per_address: ClassVar[Counter[str]] = Counter()
    refusals: ClassVar[Counter[str]] = Counter()
    """Connections refused, by error code (tests and the flood bench read it)."""
    live_refusals: ClassVar[LiveRefusals | None] = None
    """The app's memory of refused spectators (None: every handshake goes to the app)."""

    @classmethod
    def configured(
        cls, front_door: FrontDoor, live_refusals: LiveRefusals | None = None
    ) -> type[GuardedHttpTools]:
        """A protocol class with these bounds and counts of its own."""
        attributes = {
            "front_door": front_door,
            "trusted": TrustedNetworks.parse(front_door.trusted_proxies),
            "open_per_address": Counter(),
            "refusals": Counter(),
            "live_refusals": live_refusals,
        }
        return type("GuardedHttpTools", (cls,), attributes)

    @classmethod
    def set_up(cls, front_door: FrontDoor, live_refusals: LiveRefusals | None = None) -> None:
        """This process's bounds, trusted proxies and refused spectators (uvicorn takes the
        class by name into each worker, so each worker sets them on it before it serves)."""
        cls.front_door = front_door
        cls.trusted = TrustedNetworks.parse(front_door.trusted_proxies)
        cls.live_refusals = live_refusals

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bounds: FrontDoor = type(self).front_door
        self._deadline: Any = None
        self._reading_head = True
        self._head_bytes = 0
        self._header_lines = 0
        self._ends = 0  # heads and bodies read whole on this connection
        self._refusal: tuple[int, str, str] | None = None
        self._counted: str | None = None

    # -- connections ---------------------------------------------------------------------------

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        address = self.client[0] if self.client else None
        if address is not None and address not in self.trusted:
            if self.open_per_address[address] >= self.bounds.connections_per_address:
                self._refuse(429, "too_many_connections", "Too many connections from your address.")
                return
            self.open_per_address[address] += 1
            self._counted = address
        self._arm(self.bounds.header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._forget()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self) -> None:
        self._disarm()
        self._forget()  # the live channel holds leases of its own
        retry_after = self._spectator_refused()
        if retry_after is not None:
            self._refuse(429, "rate_limited", too_many_message(retry_after), retry_after)
            return
        super().handle_websocket_upgrade()

    def _spectator_refused(self) -> int | None:
        """The ``Retry-After`` this worker told a spectator's live channel (no token, not
        through a trusted proxy) from this address or to this game, if it is still running."""
        refusals = type(self).live_refusals
        if refusals is None or not self.client or self.client[0] in self.trusted:
            return None
        url = httptools.parse_url(self.url)
        path = url.path.decode("latin-1")
        game = _LIVE.match(path)
        query = url.query or b""
        scope = {"type": "websocket", "path": path, "headers": self.headers, "query_string": query}
        if game is None or bearer_token(scope):
            return None  # a seat's, or a made-up token's: the app decides
        try:
            refusals.raise_if_refused(self.client[0], game.group(1)[:64])
        except Refused as refused:
            return refused.retry_after
        return None

    def _forget(self) -> None:
        if self._counted is not None:
            self.open_per_address[self._counted] -= 1
            if self.open_per_address[self._counted] <= 0:
                del self.open_per_address[self._counted]
            self._counted = None

    # -- the head and the body -----------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        ends = self._ends
        super().data_received(data)
        # A piece in which no head and no body ended is all head while a head is awaited (one
        # in which something ended was read within the bounds: the rest is the next request's).
        if self._reading_head and ends == self._ends and not self.transport.is_closing():
            self._head_bytes += len(data)
            if self._head_bytes > self.bounds.max_header_bytes:
                self._refuse(
                    431,
                    "headers_too_large",
                    f"The request's head is larger than {self.bounds.max_header_bytes} bytes.",
                )

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_lines += 1
        if self._header_lines > self.bounds.max_headers:
            self._refusal = (
                431,
                "headers_too_large",
                f"The request has more than {self.bounds.max_headers} header lines.",
            )
            raise _HeadersRefused
        super().on_header(name, value)

    def send_400_response(self, msg: str) -> None:
        if self._refusal is not None:  # our own refusal, raised inside the parser
            self._refuse(*self._refusal)
        else:
            super().send_400_response(msg)

    def on_headers_complete(self) -> None:
        self._ends += 1
        self._reading_head = False
        self._head_bytes = 0
        self._header_lines = 0
        self._arm(self.bounds.body_timeout_s)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._ends += 1
        self._disarm()
        self._reading_head = True
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm(self.bounds.header_timeout_s)

    # -- deadlines and refusals ----------------------------------------------------------------

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        """The head or the body was not in by its deadline."""
        self._deadline = None
        if self.transport.is_closing():
            return
        if not self._reading_head and self.cycle is not None and self.cycle.response_started:
            self.transport.close()  # the app answered already (a 413): no second answer
            return
        self._refuse(408, "request_timeout", "The request was not sent in time.")

    def _refuse(self, status: int, code: str, message: str, retry_after: int = 1) -> None:
        """Answer with the error and close the connection (nothing reaches the app)."""
        self._disarm()
        self.refusals[code] += 1
        body = msgspec.json.encode({"error": {"code": code, "message": message}})
        head = [
            f"HTTP/1.1 {status} {_REASONS[status]}",
            "content-type: application/json",
            f"content-length: {len(body)}",
            "connection: close",
        ]
        if status == 429:
            head.append(f"retry-after: {retry_after}")
        self.transport.write("\r\n".join(head).encode() + b"\r\n\r\n" + body)
        self.transport.close()
