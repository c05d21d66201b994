# long: one limiter's buckets, request classes and its middleware's HTTP, SSE and WebSocket paths
"""Rate limits and quotas of the gateway, kept in Redis so they hold across gateway instances.

`RateLimiting` is an ASGI middleware in front of every route. It sorts each request into one
class and counts it in that class's buckets (the `limits` library: sliding-window counters in
Redis, shared by every gateway instance on the same Redis):

| class | requests | counted per |
|---|---|---|
| ``create`` | ``POST /games`` and ``POST /games/{id}/seats/{n}`` | client address |
| ``dispute`` | ``POST /disputes`` (an uploaded file audited, replayed and drawn) | address |
| ``seat`` | every other request whose token holds a seat of the path's game | seat token |
| ``read`` | every other request (no token, or one that holds no seat there) | address |
| ``refused`` | requests answered 4xx but 404 (a refused command, a wrong token) | see below |
| ``live`` | live connections opened by spectators (a seat's: in its ``seat`` bucket) | address |

A refusal counts in the seat's ``refused`` bucket when the token holds a seat, otherwise in
the address's ``refused_per_address``.

A token counts in its own bucket only once it resolves to a seat (`CachedSeatTokens`: from
memory for a real player): a made-up ``Authorization: Bearer`` is an anonymous request of its
address, so it neither escapes the address's limits nor spends a real player's quota, and a
real player's requests are never refused for what others sent from the same address (a shared
proxy, an office). Over a limit the answer is **429** ``rate_limited`` with ``Retry-After``
(seconds), and the request goes no further: nothing of it is sent to the rules service or
stored. A normal request costs at most one Redis round trip (its class's bucket), most of them
none: a worker takes a bucket's units from Redis in leases and spends them in process
(`gateway.limit_leases`, with the bound that holds across workers). The ``refused`` quotas are
counted one by one, and only read for a client this instance has seen refused within their
window.
Seat tokens are never keys: a token's bucket is named by a prefix of its SHA-256.

Live connections are also capped while they are open: a spectator's at most
``live_per_address`` per address and ``live_per_game`` per game, a seat's at most
``live_per_seat`` per seat token, apart, so spectators cannot take a seat's slots; across
instances. A connection holds a lease (a member
of a sorted set scored by its expiry) that it renews while it lives and drops when it ends, so a
crashed instance's leases lapse by themselves. A refused connection is accepted, sent the error
``{"error": {"code": "rate_limited", ...}}`` and closed with code 4429, as the live channel
reports its other errors; a spectator refused again from memory before its ``Retry-After`` has
its handshake answered HTTP 429 instead (`gateway.live_admission`).

If the limits cannot be read (Redis down), requests pass: the store refuses them anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from limits import RateLimitItem, parse_many
from limits.aio.storage import RedisClusterStorage, RedisStorage
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from redis.asyncio import BlockingConnectionPool, Redis
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from eventstore.redis_client import (
    CLUSTER_NODE_CONNECTIONS,
    blocking_pool,
    is_cluster_url,
    redis_client,
)
from gameserver.gateway.limit_leases import LeasedWindow
from gameserver.gateway.live_admission import (
    LiveRefusals,
    too_many_http,
    too_many_message,
    too_many_websocket,
)
from gameserver.gateway.refusal_memory import Refused, RefusedUntil
from gameserver.gateway.request_limits import (
    live_refusal,
    message_bytes,
)
from gameserver.runtime.logging import get_logger
from gameserver.runtime.settings_parts import RateLimits

log = get_logger("renature.gateway")

_CREATE = re.compile(r"^/games/?$|^/games/[^/]+/seats/[^/]+$")
_GAME_OF = re.compile(r"^/games/([^/]+)(?:/|$)")
_GAME_ID = re.compile(r"^[^:{}\s]{1,64}$")
_DISPUTES = "/disputes"
_EVENT_STREAM = re.compile(r"^/games/[^/]+/events/stream$")
_HTTP_STATUS = re.compile(r'"http_status":\s*(\d{3})')
UNLIMITED_PATHS = frozenset({"/healthz"})
"""Probes of the process supervisor and Kubernetes are never limited."""

LEASE_S = 60.0
"""A live connection's lease lasts this long unless renewed (it is renewed every third)."""

_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
"""


BUCKETS = ("create", "seat", "read", "refused", "refused_per_address", "live", "dispute")
"""The request classes counted in sliding windows (the fields of `RateLimits`, the settings'
``limits``, in that notation)."""


class Limiter:
    """The buckets of `RateLimits` over one Redis, on a connection pool of their own.

    Requests wait for a free connection (a blocking pool) rather than fail: a limiter that
    failed under load would let the very flood it is for through."""

    CONNECTIONS = 64

    def __init__(self, redis_url: str, limits: RateLimits, prefix: str = "rn") -> None:
        self.limits = limits
        self.prefix = prefix
        self.storage: RedisStorage
        self._pool: BlockingConnectionPool | None = None
        if is_cluster_url(redis_url):
            self.storage = RedisClusterStorage(
                f"async+{redis_url.split('/0', 1)[0]}",
                implementation="redispy",
                key_prefix=f"{prefix}:limits",
                # a cluster client fails (and then fails all) when its cap is reached, where a
                # blocking pool would wait: eventstore.redis_client.CLUSTER_NODE_CONNECTIONS
                max_connections=CLUSTER_NODE_CONNECTIONS,
            )
            self.redis: Any = redis_client(redis_url)
        else:
            pool = blocking_pool(redis_url, max_connections=self.CONNECTIONS, timeout=10)
            self.storage = RedisStorage(
                f"async+{redis_url}",
                implementation="redispy",
                key_prefix=f"{prefix}:limits",
                connection_pool=pool,  # type: ignore[arg-type]  # limits types its options loosely
            )
            self.redis = Redis(connection_pool=pool)
            self._pool = pool
        self.window = SlidingWindowCounterRateLimiter(self.storage)
        self.leases = LeasedWindow(self.window, limits.lease)
        self.items: dict[str, list[RateLimitItem]] = {
            name: parse_many(getattr(limits, name)) for name in BUCKETS
        }
        self._acquire = self.redis.register_script(_ACQUIRE)
        self.boxed = RefusedUntil()
        self.live_refusals = LiveRefusals(self.boxed)  # spectators' refused from memory
        self._suspects: dict[tuple[str, ...], float] = {}
        self._suspect_s = max(
            item.get_expiry()
            for bucket in ("refused", "refused_per_address")
            for item in self.items[bucket]
        )

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self.storage.bridge.storage.aclose()  # type: ignore[attr-defined]
        await self.redis.aclose()
        if self._pool is not None:
            await self._pool.disconnect()

    async def hit(self, bucket: str, *identity: str) -> None:
        """Count one request in ``bucket``; `Refused` when that passes one of its limits.
        Counted from the worker's lease of the bucket's units where it holds one
        (`LeasedWindow`: most requests cost no round trip). A client this instance refused is
        refused from memory, without Redis, for as long as its ``Retry-After`` said
        (`RefusedUntil`): a flood costs no round trip."""
        self.boxed.raise_if_refused((bucket, *identity))
        for item in self.items[bucket]:
            if not await self.leases.hit(item, bucket, *identity):
                retry_after = await self._retry_after(item, bucket, *identity)
                self.boxed.refuse((bucket, *identity), retry_after)
                raise Refused(retry_after)

    async def check(self, bucket: str, *identity: str) -> None:
        """`Refused` when ``bucket`` is used up already (counts nothing). Only asked of
        Redis for a client this instance saw refused within the bucket's window (`suspect`):
        a client that sends nothing refused costs no round trip, and one that does is
        checked from its first refusal on each instance."""
        if not self._is_suspect((bucket, *identity)):
            return
        self.boxed.raise_if_refused((bucket, *identity))
        for item in self.items[bucket]:
            if not await self.window.test(item, bucket, *identity):
                retry_after = await self._retry_after(item, bucket, *identity)
                self.boxed.refuse((bucket, *identity), retry_after)
                raise Refused(retry_after)

    async def refuse(self, bucket: str, *identity: str) -> None:
        """Count a refused request in ``bucket`` (and check it from now on)."""
        self._suspects[(bucket, *identity)] = time.monotonic() + self._suspect_s
        if len(self._suspects) > 100_000:
            now = time.monotonic()
            self._suspects = {k: t for k, t in self._suspects.items() if t > now}
        for item in self.items[bucket]:  # counted one by one: `check` reads these counts
            if not await self.window.hit(item, bucket, *identity):
                return

    def _is_suspect(self, key: tuple[str, ...]) -> bool:
        until = self._suspects.get(key)
        if until is None:
            return False
        if until < time.monotonic():
            del self._suspects[key]
            return False
        return True

    async def _retry_after(self, item: RateLimitItem, *identity: str) -> int:
        stats = await self.window.get_window_stats(item, *identity)
        return max(1, math.ceil(stats.reset_time - time.time()))

    def lease_key(self, kind: str, name: str) -> str:
        return f"{self.prefix}:limits:live:{kind}:{{{name}}}"

    async def lease(self, kind: str, name: str, member: str, most: int) -> bool:
        """Take one of the ``most`` live-connection leases of ``name``."""
        now = time.time()
        ok = await self._acquire(
            keys=[self.lease_key(kind, name)],
            args=[now, now + LEASE_S, most, member, int(LEASE_S * 1000)],
        )
        return bool(ok)

    async def renew(self, leases: list[tuple[str, str]], member: str) -> None:
        until = time.time() + LEASE_S
        for kind, name in leases:
            key = self.lease_key(kind, name)
            await self.redis.zadd(key, {member: until}, xx=True)
            await self.redis.pexpire(key, int(LEASE_S * 1000))

    async def release(self, leases: list[tuple[str, str]], member: str) -> None:
        for kind, name in leases:
            self.live_refusals.freed(kind, name)
            await self.redis.zrem(self.lease_key(kind, name), member)


def client_address(scope: Scope) -> str:
    """The client's address (the TCP peer, or the client a trusted proxy names:
    `gateway.client_address`)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def bearer_token(scope: Scope) -> str | None:
    """The seat token of the request (``Authorization: Bearer`` or the live channel's
    ``?token=``), or None."""
    token = None
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, credentials = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and credentials.strip():
                token = credentials.strip()
            break
    if token is None and (scope["type"] == "websocket" or _EVENT_STREAM.match(scope["path"])):
        token = _query_token(scope.get("query_string", b""))
    return token


def token_bucket(token: str) -> str:
    """A token's bucket name: a prefix of its SHA-256 (tokens are never keys)."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:32]


def _query_token(query: bytes) -> str | None:
    from urllib.parse import parse_qsl

    for name, value in parse_qsl(query.decode("latin-1")):
        if name == "token" and value:
            return value
    return None


def request_class(scope: Scope, holder: str | None) -> str:
    if scope["method"] == "POST" and _CREATE.match(scope["path"]):
        return "create"
    if scope["method"] == "POST" and scope["path"] == _DISPUTES:
        return "dispute"
    return "seat" if holder is not None else "read"


SeatLookup = Callable[[str, str], Awaitable[int | None]]
"""The seat a token holds in a game, or None (`CachedSeatTokens.seat_of`)."""


class RateLimiting:  # long: the HTTP, SSE and WebSocket paths of one set of buckets
    """The ASGI middleware (see the module's docstring)."""

    def __init__(self, app: ASGIApp, limiter: Limiter, seats: SeatLookup | None = None) -> None:
        self.app = app
        self.limiter = limiter
        self.seats = seats

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in UNLIMITED_PATHS:
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def seat_holder(self, scope: Scope) -> str | None:
        """The bucket of the request's token when it holds a seat of the path's game; None
        for anyone else (no token, a made-up one, another game's, no game in the path)."""
        token = bearer_token(scope)
        match = _GAME_OF.match(scope["path"])
        if token is None or self.seats is None or match is None:
            return None
        if not _GAME_ID.match(match.group(1)):
            return None
        try:
            seat = await self.seats(match.group(1), token)
        except Exception:  # Redis away: counted as anonymous (the route answers 503)
            return None
        return token_bucket(token) if seat is not None else None

    async def _admit(self, kind: str, address: str, holder: str | None) -> None:
        """Count one request of ``kind``: a seat's against its token's buckets, anyone
        else's against its address's. `Refused` when over a limit."""
        if holder is None:
            await self.limiter.check("refused_per_address", address)
        else:
            await self.limiter.check("refused", holder)
        await self.limiter.hit(kind, holder if kind == "seat" and holder else address)

    async def _refused(self, status: int, address: str, holder: str | None) -> None:
        """Count an answer that refused the request (4xx but 404 and 429)."""
        if 400 <= status < 500 and status not in (404, 429):
            with contextlib.suppress(Exception):
                if holder is None:
                    await self.limiter.refuse("refused_per_address", address)
                else:
                    await self.limiter.refuse("refused", holder)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if _EVENT_STREAM.match(scope["path"]):
            await self._event_stream(scope, receive, send)
            return
        address = client_address(scope)
        holder = await self.seat_holder(scope)
        try:
            await self._admit(request_class(scope, holder), address, holder)
        except Refused as refused:
            await too_many_http(send, refused.retry_after)
            return
        except Exception as error:  # the limits cannot be read: let the request through
            log.warning("gateway_rate_limits_unavailable", error=type(error).__name__)
            await self.app(scope, receive, send)
            return
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        await self.app(scope, receive, watch)
        await self._refused(status, address, holder)

    async def _take_live(
        self, scope: Scope, address: str, holder: str | None, member: str
    ) -> list[tuple[str, str]]:
        """Count a live connection's opening and take its leases (a seat's per token, a
        spectator's per address and per game); `Refused` (with nothing held) when over a
        limit. Fails open when Redis cannot be read."""
        limits = self.limiter.limits
        leases: list[tuple[str, str]] = []
        game = _GAME_OF.match(scope["path"])
        try:
            if holder is not None and game is not None:
                await self._admit("seat", address, holder)
                taken = [("seat", f"{game.group(1)}:{holder}", limits.live_per_seat)]
            else:
                name = None if game is None else game.group(1)[:64]
                self.limiter.live_refusals.raise_if_refused(address, name)  # no Redis
                await self._admit("live", address, None)
                taken = [("address", address, limits.live_per_address)]
                if name is not None:
                    taken.append(("game", name, limits.live_per_game))
            for kind, name, most in taken:
                if not await self.limiter.lease(kind, name, member, most):
                    self.limiter.live_refusals.at_cap(kind, name, int(LEASE_S // 6))
                    raise Refused(int(LEASE_S // 6))
                leases.append((kind, name))
        except Refused:
            with contextlib.suppress(Exception):
                await self.limiter.release(leases, member)
            raise
        except Exception as error:
            log.warning("gateway_rate_limits_unavailable", error=type(error).__name__)
        return leases

    @contextlib.asynccontextmanager
    async def _holding(self, leases: list[tuple[str, str]], member: str) -> AsyncIterator[None]:
        """Renew the leases while the connection lives; give them back when it ends."""
        renewing = asyncio.create_task(self._renew(leases, member)) if leases else None
        try:
            yield
        finally:
            if renewing is not None:
                renewing.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await renewing
            with contextlib.suppress(Exception):
                await self.limiter.release(leases, member)

    async def _event_stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``GET /games/{id}/events/stream`` (server-sent events) is a live connection."""
        address = client_address(scope)
        member = uuid.uuid4().hex
        try:
            leases = await self._take_live(scope, address, await self.seat_holder(scope), member)
        except Refused as refused:
            await too_many_http(send, refused.retry_after)
            return
        async with self._holding(leases, member):
            await self.app(scope, receive, send)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        address = client_address(scope)
        member = uuid.uuid4().hex
        holder = await self.seat_holder(scope)
        try:
            leases = await self._take_live(scope, address, holder, member)
        except Refused as refused:
            await too_many_websocket(scope, receive, send, refused)
            return
        async with self._holding(leases, member):
            await self.app(
                scope,
                self._count_messages(receive, send, address, holder),
                self._count_refusals(send, address, holder),
            )

    def _count_messages(
        self, receive: Receive, send: Send, address: str, holder: str | None
    ) -> Receive:
        """Commands sent over the live channel count as the HTTP route's do: each message in
        the seat's ``seat`` bucket (anyone else's in its address's ``read`` bucket), held to
        the ``refused`` quotas; one over a limit is answered ``rate_limited`` (429) in the
        channel's answer format and not handed to the app."""

        async def counted() -> Message:
            while True:
                message: Message = await receive()
                if message["type"] != "websocket.receive":
                    return message
                try:
                    await self._admit("read" if holder is None else "seat", address, holder)
                except Refused as refused:
                    text = live_refusal(
                        message_bytes(message),
                        429,
                        "rate_limited",
                        too_many_message(refused.retry_after),
                    )
                    await send({"type": "websocket.send", "text": text})
                    continue
                except Exception as error:
                    log.warning("gateway_rate_limits_unavailable", error=type(error).__name__)
                return message

        return counted

    def _count_refusals(self, send: Send, address: str, holder: str | None) -> Send:
        """Count the live channel's refused commands (their answers say ``http_status``)."""

        async def watched(message: Message) -> None:
            await send(message)
            text = message.get("text") if message["type"] == "websocket.send" else None
            if not text or not text.startswith('{"answer"') or '"rejected"' not in text:
                return
            found = _HTTP_STATUS.search(text)
            await self._refused(int(found.group(1)) if found else 0, address, holder)

        return watched

    async def _renew(self, leases: list[tuple[str, str]], member: str) -> None:
        while True:
            await asyncio.sleep(LEASE_S / 3)
            with contextlib.suppress(Exception):
                await self.limiter.renew(leases, member)
