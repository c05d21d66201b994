"""The lobby: an index of the games created here, their hosts and their invitations.

- The index is one sorted set ``<prefix>:lobby`` whose members sort newest first
  (``<inverted creation ms>:<game id>``, all with score 0, read by lex range), so a page is one
  ``ZRANGE BYLEX`` from the cursor (the last member shown) and a game created meanwhile never
  shifts a page. What a game is (phase, board, seats) is folded from its events, like every
  other read: the index never goes stale.
- The creator of a game gets a **host token** (only its SHA-256 is kept, in the game's
  ``lobby`` hash, in the game's hash slot): it starts or cancels the game and removes players
  before the start. A game's seats are ``open`` (anyone may join) or ``invite`` (a join must
  carry the **invitation code** given to the host at creation).
- With an ``Idempotency-Key`` the host token and the code are derived from the key (HMAC), so a
  retried creation answers the same ones; otherwise they are random. The game's hash keeps the
  fingerprint of the keyed creation (``request``), so a retry with another body (another
  ``seating``) is refused before it could rewrite anything (gateway.idempotency).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field
from redis.asyncio import Redis

from eventstore import KeyLayout
from eventstore.redis_values import text
from gameplatform.interface import HostedGame, HostedState, Table
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.seat_tokens import token_digest

Seating = Literal["open", "invite"]
MAX_MS = 10**13
"""Creation times are inverted against this so that the newest game sorts first."""


class SeatSummary(BaseModel):
    seat: int
    colour: str
    name: str | None = Field(description="The player's name; null while the seat is free")
    status: str = Field(description="playing, bot (timed out), resigned or removed")


class ClockSummary(BaseModel):
    per_turn: int | None
    total: int | None
    increment: int
    on_timeout: str
    running_for: int | None
    deadline: str | None = Field(description="UTC time the running turn's time is up")
    remaining_ms: list[int]


def seats_of(table: Table) -> list[SeatSummary]:
    """Each seat of a game (any game's `Table`)."""
    return [
        SeatSummary(seat=n, colour=colour, name=name, status=status)
        for n, (colour, name, status) in enumerate(
            zip(table.colours, table.names, table.statuses, strict=True)
        )
    ]


def utc(ms: int) -> str:
    """Milliseconds since the epoch as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (as the games' views say)."""
    seconds, millis = divmod(ms, 1000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"


def clock_of(game: HostedGame, state: HostedState) -> ClockSummary | None:
    """A game's clock (`Game.clock`; None for a game created without a time control)."""
    shown = game.clock(state)
    if shown is None:
        return None
    return ClockSummary(
        per_turn=shown.per_turn,
        total=shown.total,
        increment=shown.increment,
        on_timeout=shown.on_timeout,
        running_for=shown.running_for,
        deadline=None if shown.deadline_ms is None else utc(shown.deadline_ms),
        remaining_ms=shown.remaining_ms,
    )


def derived(key: str, purpose: str, size: int) -> str:
    """A secret derived from a client's idempotency key (the same on every retry)."""
    digest = hmac.new(key.encode(), f"renature:{purpose}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:size]).decode().rstrip("=")


class Lobby:
    """Index, hosts and invitations over the gateway's Redis."""

    def __init__(self, redis: Redis, layout: KeyLayout) -> None:
        self._redis = redis
        self._layout = layout

    @property
    def index_key(self) -> str:
        return f"{self._layout.prefix}:lobby"

    def game_key(self, game_id: str) -> str:
        return self._layout.game_scoped_key("lobby", game_id)

    async def register(
        self,
        game_id: str,
        *,
        seating: Seating,
        created_ms: int,
        idempotency_key: str | None,
    ) -> tuple[str, str | None]:
        """Record a new game: its host token and (for ``invite`` seats) its invitation code,
        both returned once. A retry (same idempotency key) gets the same ones."""
        if idempotency_key is None:
            host = secrets.token_urlsafe(32)
            code = secrets.token_urlsafe(9) if seating == "invite" else None
        else:
            host = derived(idempotency_key, "host", 32)
            code = derived(idempotency_key, "invite", 9) if seating == "invite" else None
        fields: dict[str | bytes | bytearray | memoryview | int | float, str] = {
            "host": token_digest(host),
            "seating": seating,
        }
        if code is not None:
            fields["invite"] = token_digest(code)
        pipe = self._redis.pipeline(transaction=False)
        pipe.hsetnx(self.game_key(game_id), "created", str(created_ms))
        pipe.hset(self.game_key(game_id), mapping=fields)
        await pipe.execute()
        created = await self._redis.hget(self.game_key(game_id), "created")
        member = f"{MAX_MS - int(created or created_ms):013d}:{game_id}"
        await self._redis.zadd(self.index_key, {member: 0})
        return host, code

    async def hold_request(self, game_id: str, request: str) -> bool | None:
        """Record the fingerprint of the keyed creation of ``game_id`` unless one is recorded:
        True when recorded now, None when the recorded one is this (a retry), False when it is
        another request's (the key was reused for another body)."""
        key = self.game_key(game_id)
        if await self._redis.hsetnx(key, "request", request):
            return True
        return None if text(await self._redis.hget(key, "request") or b"") == request else False

    async def forget_request(self, game_id: str, request: str) -> None:
        """Undo `hold_request` (its creation was refused), unless a game was registered."""
        key = self.game_key(game_id)
        if not await self._redis.hexists(key, "host"):
            await self._redis.hdel(key, "request")

    async def facts(self, game_id: str) -> dict[str, str]:
        raw = await self._redis.hgetall(self.game_key(game_id))
        return {text(k): text(v) for k, v in raw.items()}

    async def seating(self, game_id: str) -> str:
        return (await self.facts(game_id)).get("seating", "open")

    async def is_host(self, game_id: str, token: str | None) -> bool:
        """Whether ``token`` is the game's host token (no token is no host)."""
        if not token:
            return False
        stored = (await self.facts(game_id)).get("host")
        digest = token_digest(token)
        return stored is not None and hmac.compare_digest(stored, digest)

    async def check_invitation(self, game_id: str, code: str | None) -> None:
        """403 ``invitation_required`` / ``invalid_invitation`` for a game whose seats need
        the host's invitation code; nothing for an open game."""
        stored = (await self.facts(game_id)).get("invite")
        if stored is None:
            return
        if not code:
            raise ApiError(
                403,
                "invitation_required",
                "This game's seats are by invitation: send the host's invitation code.",
            )
        if not hmac.compare_digest(stored, token_digest(code)):
            raise ApiError(403, "invalid_invitation", "This invitation code is not this game's.")

    async def page(self, cursor: str | None, count: int) -> tuple[list[str], str | None]:
        """Up to ``count`` game ids after ``cursor`` (newest first), and the cursor that goes
        on from the last one (None at the end)."""
        start = "-" if cursor is None else "(" + decode_cursor(cursor)
        members = await self._redis.zrange(
            self.index_key, start, "+", bylex=True, offset=0, num=count
        )
        names = [text(m) for m in members]
        ids = [name.partition(":")[2] for name in names]
        more = len(names) == count
        return ids, encode_cursor(names[-1]) if more and names else None

    async def cursor_after(self, game_id: str) -> str | None:
        """The cursor that goes on after ``game_id``."""
        created = await self._redis.hget(self.game_key(game_id), "created")
        if created is None:
            return None
        return encode_cursor(f"{MAX_MS - int(text(created)):013d}:{game_id}")


def encode_cursor(member: str) -> str:
    return base64.urlsafe_b64encode(member.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The index position a cursor names. A cursor is a position in the index's order, not a
    key to look up: one that `GET /games` did not give is still a position (wherever it
    sorts), so it is never refused."""
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return cursor
