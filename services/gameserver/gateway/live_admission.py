"""Spectators' live connections refused from memory, and the answers of a refused request.

A spectator's live connection costs a WebSocket handshake, the ``live`` bucket of its address
and two leases in Redis (its address's and its game's, `gateway.ratelimit`). A burst of
spectators that find a cap reached used to spend all of it again on every attempt, however
often they were refused. `LiveRefusals` keeps, per gateway instance, what Redis answered last:
an address over its ``live`` rate or its ``refused_per_address`` quota (`RefusedUntil`, as every
bucket's refusal is kept), an address at its ``live_per_address`` cap and a game at its
``live_per_game`` cap, each until the ``Retry-After`` it was told. A spectator's connection that
meets one of them is refused at once, before any Redis call and before the app (and its
handshake with the channel) sees it: a WebSocket's handshake itself is answered HTTP 429 with
``Retry-After`` and the ``{"error": {"code": "rate_limited"}}`` body (no upgrade, no frames, no
closing handshake: the cheapest refusal there is, for a client that came back before the
``Retry-After`` it was told), an event stream 429 with ``Retry-After``. The refusal that Redis
decides keeps the live channel's own answer (an accepted socket, that error frame, close code
4429), so a browser, which cannot read a refused handshake's status, is told why once; the
JavaScript client takes a handshake that fails as a cue to read the event stream, whose 429 it
reads. A cap refusal is forgotten as soon as this instance gives back a lease of that
address or game, so a slot that frees here is taken at once; one freed on another instance is
seen after the ``Retry-After``, as that client was told. Seats' connections are never looked up
here: their leases are their own.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar

import msgspec
from starlette.types import Message, Receive, Scope, Send

from gameserver.gateway.refusal_memory import Refused, RefusedUntil
from gameserver.gateway.request_limits import error_response_messages

CAPS = ("address", "game")
"""The kinds of a spectator's live leases (its address's and its game's)."""


_DENIED: ContextVar[bool] = ContextVar("renature_handshake_denied", default=False)
"""Set by `too_many_websocket` in the connection's task once its handshake was answered 429."""


class DeniedHandshakes(logging.Filter):
    """uvicorn's WebSocket protocol logs an error for every handshake answered with an HTTP
    response (``websocket.http.response.*``, the ASGI way to deny one): it never counts that
    handshake as complete. For a handshake this module denied on purpose that line is
    dropped: a flood of refused sockets would otherwise write an error line apiece (and spend
    more CPU on it than on the refusal). Any other handshake left incomplete is still logged."""

    MESSAGE = "ASGI callable returned without completing handshake."

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.msg == self.MESSAGE and _DENIED.get())

    @classmethod
    def install(cls, logger: str = "uvicorn.error") -> None:
        """Put the filter on uvicorn's error logger (once)."""
        target = logging.getLogger(logger)
        if not any(isinstance(f, cls) for f in target.filters):
            target.addFilter(cls())


class RefusedAgain(Refused):
    """A refusal answered from memory: the client was refused before and came back within its
    ``Retry-After``."""


class LiveRefusals:
    """What this instance was told of spectators' live connections (the module's text)."""

    def __init__(self, boxed: RefusedUntil) -> None:
        self.boxed = boxed
        """The limiter's remembered refusals: the buckets' and, under ``("lease", kind,
        name)``, the live caps'."""
        self.refused = 0
        """Connections refused from memory (tests and the flood bench)."""

    def raise_if_refused(self, address: str, game: str | None) -> None:
        """`Refused` when a spectator's connection to ``game`` from ``address`` is known to be
        over a limit (nothing asked of Redis)."""
        keys = [("live", address), ("refused_per_address", address), ("lease", "address", address)]
        if game is not None:
            keys.append(("lease", "game", game))
        try:
            for key in keys:
                self.boxed.raise_if_refused(key)
        except Refused as refused:
            self.refused += 1
            raise RefusedAgain(refused.retry_after) from None

    def at_cap(self, kind: str, name: str, retry_after: int) -> None:
        """Redis refused a lease of ``kind`` (address, game) ``name``: remember it."""
        if kind in CAPS:
            self.boxed.refuse(("lease", kind, name), retry_after)

    def freed(self, kind: str, name: str) -> None:
        """This instance gave back a lease of ``kind`` ``name``: a new one may fit."""
        if kind in CAPS:
            self.boxed.forget(("lease", kind, name))


def too_many_message(retry_after: int) -> str:
    return f"Too many requests; retry in {retry_after} s."


def too_many_answer(retry_after: int) -> tuple[Message, Message]:
    """The two ASGI messages of a 429 with its ``Retry-After`` (``http.response.*``)."""
    start, body = error_response_messages(429, "rate_limited", too_many_message(retry_after))
    start["headers"].append((b"retry-after", str(retry_after).encode()))
    return start, body


async def too_many_http(send: Send, retry_after: int) -> None:
    start, body = too_many_answer(retry_after)
    await send(start)
    await send(body)


async def too_many_websocket(scope: Scope, receive: Receive, send: Send, refused: Refused) -> None:
    """Refuse a live WebSocket: accept, say why, close with 4429 (the live channel's way of
    reporting errors); refused again from memory, its handshake answered HTTP 429 instead
    (the module's text says why)."""
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    retry_after = refused.retry_after
    if isinstance(refused, RefusedAgain) and "websocket.http.response" in (
        scope.get("extensions") or {}
    ):
        start, body = too_many_answer(retry_after)
        await send({**start, "type": "websocket.http.response.start"})
        await send({**body, "type": "websocket.http.response.body"})
        _DENIED.set(True)  # the connection's own task: uvicorn's line about it is dropped
        return
    await send({"type": "websocket.accept"})
    error = {"error": {"code": "rate_limited", "message": too_many_message(retry_after)}}
    await send({"type": "websocket.send", "text": msgspec.json.encode(error).decode()})
    await send({"type": "websocket.close", "code": 4429})
