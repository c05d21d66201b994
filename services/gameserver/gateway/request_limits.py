"""Request limits with clear answers, enforced before any route sees a request.

`RequestLimits` is a plain ASGI middleware in front of the whole app:

- a body longer than ``max_body_bytes`` is answered **413** ``body_too_large``. A declared
  ``Content-Length`` above the cap is refused before a byte of the body is read; a body without
  one (chunked) is counted while it streams in and refused as soon as it passes the cap, so a
  100 MB body is never read whole (the connection is closed with the answer).
- JSON nested deeper than ``max_json_depth`` is answered **422** ``body_too_deep`` (the parsers
  and the gateway's own walks are recursive: deep nesting would otherwise end in a
  ``RecursionError`` and a 500).

Bodies within the limits are handed to the app unchanged (they are at most ``max_body_bytes``
long, so holding one in memory is bounded). WebSocket and lifespan scopes pass untouched.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import msgspec
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 64 * 1024
"""The largest request body (a command is a few hundred bytes; a game creation fewer)."""
MAX_JSON_DEPTH = 16
"""The deepest JSON nesting a body may have (a command nests 3 levels)."""
LARGER_BODIES: Mapping[str, int] = {"/disputes": 4 * 1024 * 1024}
"""Paths that take more: an exported events file to inspect (the route checks its own cap)."""

_JSON_TOKENS = re.compile(rb'[\[\]{}"\\]')


def json_depth_exceeds(body: bytes, limit: int) -> bool:
    """Whether the JSON text ``body`` nests arrays and objects deeper than ``limit``.

    Brackets inside strings do not count. Linear in the body's length and without recursion;
    a body with no more than ``limit`` opening brackets is passed at once (every normal one)."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    depth = 0
    in_string = False
    skip = -1  # the position of a character escaped by a backslash
    for match in _JSON_TOKENS.finditer(body):
        position = match.start()
        if position == skip:
            continue
        token = body[position]
        if in_string:
            if token == 0x5C:  # backslash: the next character is escaped
                skip = position + 1
            elif token == 0x22:  # closing quote
                in_string = False
        elif token == 0x22:
            in_string = True
        elif token in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif token in (0x5D, 0x7D):
            depth -= 1
    return False


def error_response_messages(
    status: int, code: str, message: str, *, close: bool = False
) -> tuple[Message, Message]:
    """The two ASGI messages of a JSON error answer in the common shape."""
    body = msgspec.json.encode({"error": {"code": code, "message": message}})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    start: Message = {"type": "http.response.start", "status": status, "headers": headers}
    return start, {"type": "http.response.body", "body": body, "more_body": False}


class BodyTooLargeError(Exception):
    """The body passed the cap while it was read."""


class RequestLimits:
    """The ASGI middleware: body size and JSON depth limits (see the module's docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        max_body_bytes: int = MAX_BODY_BYTES,
        max_json_depth: int = MAX_JSON_DEPTH,
        larger: Mapping[str, int] = LARGER_BODIES,
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.max_json_depth = max_json_depth
        self.larger = dict(larger)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self.app(scope, self._guard_messages(receive, send), send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.larger.get(scope["path"], self.max_body_bytes)
        declared = _content_length(scope)
        if declared is not None and declared > cap:
            await self._too_large(send, cap)
            return
        try:
            body, disconnected = await self._read_body(receive, cap)
        except BodyTooLargeError:
            await self._too_large(send, cap)
            return
        if disconnected:  # the client went away before sending its body: nothing to answer
            return
        if body and _is_json(scope) and json_depth_exceeds(body, self.max_json_depth):
            for message in error_response_messages(
                422,
                "body_too_deep",
                f"The body nests arrays and objects more than {self.max_json_depth} levels deep.",
            ):
                await send(message)
            return
        await self.app(scope, _replay(body, receive), send)

    def _guard_messages(self, receive: Receive, send: Send) -> Receive:
        """A ``receive`` that answers a live channel's message nested too deep itself (in the
        channel's answer format, see `live_refusal`) instead of handing it to the app."""

        async def guarded() -> Message:
            while True:
                message: Message = await receive()
                if message["type"] != "websocket.receive":
                    return message
                raw = message_bytes(message)
                if not json_depth_exceeds(raw, self.max_json_depth):
                    return message
                text = live_refusal(
                    raw,
                    422,
                    "body_too_deep",
                    f"The message nests more than {self.max_json_depth} levels deep.",
                )
                await send({"type": "websocket.send", "text": text})

        return guarded

    async def _read_body(self, receive: Receive, cap: int) -> tuple[bytes, bool]:
        """The whole body (at most the cap), and whether the client disconnected instead."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return b"", True
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > cap:
                raise BodyTooLargeError
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), False

    async def _too_large(self, send: Send, cap: int) -> None:
        for message in error_response_messages(
            413, "body_too_large", f"The request body is larger than {cap} bytes.", close=True
        ):
            await send(message)


_COMMAND_ID = re.compile(rb'"command_id"\s*:\s*"([A-Za-z0-9._~-]{1,128})"')


def message_bytes(message: Message) -> bytes:
    """The payload of a ``websocket.receive`` message."""
    text = message.get("text")
    if text is not None:
        return str(text).encode("utf-8", "replace")
    return bytes(message.get("bytes") or b"")


def live_refusal(raw: bytes, status: int, code: str, message: str) -> str:
    """A refusal in the live channel's answer format (``gateway.live_commands``), naming the
    message's ``command_id`` when one can be seen without parsing it."""
    found = _COMMAND_ID.search(raw[:4096])
    command_id = found.group(1).decode() if found else ""
    answer = {
        "answer": {
            "command_id": command_id,
            "status": "rejected",
            "http_status": status,
            "error": {"code": code, "message": message},
        }
    }
    return msgspec.json.encode(answer).decode()


def _is_json(scope: Scope) -> bool:
    """Whether the body is JSON to the app (declared so, or undeclared)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            return b"json" in value.lower() and b"ndjson" not in value.lower()
    return True


def _content_length(scope: Scope) -> int | None:
    """The declared body length; None when there is none (or it is unreadable: the server
    refuses those before the app is called)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the app the body already read, then the client's own messages
    (a disconnect, which streaming answers wait for)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        message: Message = await receive()
        return message

    return replay
