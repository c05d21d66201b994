"""Bounded storage: the storage operations that apply the retention policy.

The policy (how long things stay in Redis) is part of the services' settings
(`gameserver.runtime.settings_parts.RetentionPolicy`); the retention service
(`gameserver.retention.retention_service`) decides when each game is due and applies it through
`RetentionStore`, whose operations are the store's alone:

- **indexes** per partition of lobbies (created, not yet started), closed games and packed games,
  each a sorted set scored by the time of the event (a feed entry's id: no clock is trusted but
  Redis');
- **a lobby expired**: every key of the game deleted (its stream, seed, seats, outcomes,
  models...), atomically and only if the game did not move meanwhile;
- **a finished game packed**: its stream replaced by one gzip-compressed string
  (`eventstore.archive`, about a fifth of the size, read transparently by the event store) and
  the outcomes of its commands deleted (no command can be accepted after the end);
- **a packed game archived** to ``<dir>/pNN/<game>.jsonl.gz`` (fsynced, renamed) with its latest
  seal (the server's signature of its events, where it signs), then every key of the game
  deleted, the seal's included;
- **a stream trimmed** below what every consumer group has acknowledged (``XTRIM MINID`` to the
  oldest entry some group has not acknowledged yet, or not yet been delivered): a group that
  lags keeps its entries;
- **idle consumers without pending entries removed** from every group of a stream.

Refused commands' outcomes live ``refused_outcome_ttl_s`` (minutes): the rules service records
them with that expiry (accepted ones keep the store's longer TTL while the game runs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import msgspec
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from eventstore import archive
from eventstore.keys import KeyLayout
from eventstore.redis_values import text as _text
from eventstore.types import StoredEvent

GROUP = "retention"
"""The consumer group of the retention service on every partition feed."""

GAME_KEY_KINDS = (
    "seed",
    "seats",
    "created",
    "claims",
    "lobby",
    "reads",
    "board",
    "score",
    "packed",
    "seal",
)
"""Kinds of ``<prefix>:{pNN}:<kind>:<game_id>`` keys deleted with a game (besides its stream
and its command outcomes). A new per-game key kind belongs here."""


class _Cause(msgspec.Struct):
    command_id: str | None = None


class _Caused(msgspec.Struct):
    cause: _Cause | None = None


_caused = msgspec.json.Decoder(_Caused)

Stage = Literal["created", "started", "closed"]
"""What an event does to its game's life, as the indexes record it: creates it (a lobby),
starts it, closes it (nothing is appended after it)."""

# Compacts or removes one game atomically, and only if its stream did not move meanwhile.
# KEYS[1] game stream, KEYS[2] games set, KEYS[3] index zset the game leaves, KEYS[4] packed
# key, KEYS[5] zset of packed games, KEYS[6..] keys to delete. ARGV[1] the stream's last entry
# id when the caller read it ("" for none), ARGV[2] game id, ARGV[3] packed bytes to keep
# ("": the game leaves Redis), ARGV[4] the score in KEYS[5] (its end time).
_COMPACT_LUA = r"""
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local seen = ''
if #last > 0 then seen = last[1][1] end
if seen ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
for i = 6, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('ZREM', KEYS[3], ARGV[2])
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[4], ARGV[3])
  redis.call('ZADD', KEYS[5], ARGV[4], ARGV[2])
else
  redis.call('SREM', KEYS[2], ARGV[2])
end
return 1
"""


# long: every storage operation of retention (indexes, lobbies, packing, archive, streams)
@dataclass
class RetentionStore:
    """The storage operations of retention on the Redis of one deployment (see the module
    docstring); ``consumer`` is the retention service's own in `GROUP`, never removed as idle.

    Every operation is idempotent and safe beside the running services: several instances may
    run, and a pass interrupted half way is finished by the next.
    """

    redis: Redis
    layout: KeyLayout
    consumer: str = "retention"

    def __post_init__(self) -> None:
        self._compact = self.redis.register_script(_COMPACT_LUA)

    # -- keys ---------------------------------------------------------------------------------

    def lobbies_key(self, partition: int) -> str:
        return f"{self.layout.base(partition)}:retention:lobbies"

    def finished_key(self, partition: int) -> str:
        return f"{self.layout.base(partition)}:retention:finished"

    def packed_index_key(self, partition: int) -> str:
        return f"{self.layout.base(partition)}:retention:packed"

    @property
    def lobby_index_key(self) -> str:
        """The gateway's index of listed games (a sorted set of ``<order>:<game_id>``)."""
        return f"{self.layout.prefix}:lobby"

    def index(self, pipe: Any, partition: int, game: bytes, stage: Stage, at_ms: int) -> None:
        """Record in ``pipe`` that ``game`` reached ``stage`` at ``at_ms``: a created game
        joins the lobbies, a started one leaves them, a closed one moves to the closed games."""
        if stage == "created":
            pipe.zadd(self.lobbies_key(partition), {game: at_ms}, nx=True)
        elif stage == "started":
            pipe.zrem(self.lobbies_key(partition), game)
        else:
            pipe.zrem(self.lobbies_key(partition), game)
            pipe.zadd(self.finished_key(partition), {game: at_ms}, nx=True)

    async def _unlist(self, game_id: str) -> None:
        """Drop a removed game from the gateway's game index (outside the game's hash slot,
        so after the game's own keys; its member ends with ``:<game_id>``)."""
        members = [
            member
            async for member, _ in self.redis.zscan_iter(
                self.lobby_index_key, match=f"*:{game_id}", count=1000
            )
        ]
        if members:
            await self.redis.zrem(self.lobby_index_key, *members)

    def game_keys(self, game_id: str) -> list[str]:
        """Every key of a game but its stream and its command outcomes."""
        return [self.layout.game_scoped_key(kind, game_id) for kind in GAME_KEY_KINDS]

    async def due(self, key: str, cutoff_ms: int) -> list[str]:
        return [game for game, _ in await self.due_scored(key, cutoff_ms)]

    async def due_scored(self, key: str, cutoff_ms: int) -> list[tuple[str, int]]:
        found = cast(
            "list[tuple[bytes, float]]",
            await self.redis.zrangebyscore(key, "-inf", cutoff_ms, withscores=True),
        )
        return [(_text(game), int(score)) for game, score in found]

    # -- lobbies, finished games, archives -------------------------------------------

    async def _stream(self, game_id: str) -> list[tuple[str, StoredEvent]]:
        raw = cast(  # a bytes client
            "list[tuple[bytes, dict[bytes, bytes]]]",
            await self.redis.xrange(self.layout.game_key(game_id)),
        )
        out = []
        for entry_id, fields in raw:
            text = _text(entry_id)
            version = int(text.split("-")[1])
            meta, hash_ = fields.get(b"meta"), fields.get(b"hash")
            stored = StoredEvent(
                version, fields.get(b"event", b""), meta, None if hash_ is None else _text(hash_)
            )
            out.append((text, stored))
        return out

    def _outcome_keys(self, game_id: str, events: Sequence[StoredEvent]) -> list[str]:
        """The outcome keys of the game's accepted commands (their ids are in the causes)."""
        keys = []
        for event in events:
            try:
                cause = _caused.decode(event.data).cause
            except msgspec.DecodeError:
                continue
            if cause is not None and cause.command_id:
                keys.append(self.layout.command_key(game_id, cause.command_id))
        return keys

    async def _run_compact(
        self,
        game_id: str,
        last_id: str,
        index: str,
        delete: list[str],
        keep: bytes = b"",
        score: int = 0,
    ) -> int:
        partition = self.layout.partition_of(game_id)
        keys = [
            self.layout.game_key(game_id),
            self.layout.games_key(partition),
            index,
            archive.packed_key(self.layout, game_id),
            self.packed_index_key(partition),
            *delete,
        ]
        return int(await self._compact(keys=keys, args=[last_id, game_id, keep, score]))

    async def expire_lobby(self, game_id: str) -> int:
        """Delete a lobby that never started, with every key it has (1 when deleted)."""
        entries = await self._stream(game_id)
        events = [stored for _, stored in entries]
        last_id = entries[-1][0] if entries else ""
        delete = [*self.game_keys(game_id), *self._outcome_keys(game_id, events)]
        index = self.lobbies_key(self.layout.partition_of(game_id))
        done = await self._run_compact(game_id, last_id, index, delete)
        if done:
            await self._unlist(game_id)
        return done

    async def pack_finished(self, game_id: str, ended_ms: int) -> tuple[int, int]:
        """Replace a finished game's stream by its packed form and drop its command outcomes:
        (1 when packed now, outcome keys deleted)."""
        partition = self.layout.partition_of(game_id)
        entries = await self._stream(game_id)
        if not entries:  # packed already (or gone): nothing left to do but the index
            await self.redis.zrem(self.finished_key(partition), game_id)
            return 0, 0
        events = [stored for _, stored in entries]
        outcomes = self._outcome_keys(game_id, events)
        done = await self._run_compact(
            game_id,
            entries[-1][0],
            self.finished_key(partition),
            outcomes,
            keep=archive.pack(events),
            score=ended_ms,
        )
        return done, len(outcomes) if done else 0

    async def archive_game(self, game_id: str, directory: str) -> int:
        """Write a packed finished game to the archive ``directory``, with its seal where it
        has one, then remove it from Redis (the seal too)."""
        partition = self.layout.partition_of(game_id)
        blob = cast("bytes | None", await self.redis.get(archive.packed_key(self.layout, game_id)))
        if blob is None:
            entries = await self._stream(game_id)
            if not entries:
                await self.redis.zrem(self.packed_index_key(partition), game_id)
                return 0
            blob = archive.pack(stored for _, stored in entries)
        seal = cast("bytes | None", await self.redis.get(self.layout.seal_key(game_id)))
        blob = archive.with_seal(blob, seal)  # the signature leaves Redis with the events
        archive.ArchiveDir(directory, self.layout).write(game_id, blob)
        events = archive.unpack(blob)
        delete = [*self.game_keys(game_id), *self._outcome_keys(game_id, events)]
        entries = await self._stream(game_id)
        last_id = entries[-1][0] if entries else ""
        done = await self._run_compact(game_id, last_id, self.packed_index_key(partition), delete)
        if done:
            await self._unlist(game_id)
        return done

    # -- streams and consumers ----------------------------------------------------------

    async def trim(self, stream: str) -> int:
        """Trim ``stream`` below the oldest entry a consumer group still needs."""
        try:
            groups = await self.redis.xinfo_groups(stream)
        except ResponseError:  # no such stream
            return 0
        if not groups:
            return 0  # nobody consumes it: nothing says what is done with
        floor: tuple[int, int] | None = None
        for group in groups:
            name = _text(_field(group, "name"))
            needed = _next_id(_text(_field(group, "last-delivered-id")))
            if int(_field(group, "pending") or 0):
                summary = await self.redis.xpending(stream, name)
                oldest = summary.get("min") if isinstance(summary, dict) else None
                if oldest is not None:
                    needed = min(needed, _parse_id(_text(oldest)))
            floor = needed if floor is None else min(floor, needed)
        assert floor is not None
        floor_id = f"{floor[0]}-{floor[1]}"
        return int(await self.redis.xtrim(stream, minid=floor_id, approximate=False) or 0)

    async def remove_idle_consumers(self, stream: str, idle_s: int) -> int:
        """Remove consumers idle for ``idle_s`` that hold no pending entries."""
        try:
            groups = await self.redis.xinfo_groups(stream)
        except ResponseError:
            return 0
        removed = 0
        limit_ms = idle_s * 1000
        for group in groups:
            name = _text(_field(group, "name"))
            for consumer in await self.redis.xinfo_consumers(stream, name):
                pending = int(_field(consumer, "pending") or 0)
                idle = int(_field(consumer, "idle") or 0)
                if pending == 0 and idle >= limit_ms:
                    who = _text(_field(consumer, "name"))
                    if who == self.consumer and name == GROUP:
                        continue  # this very pass is using it
                    await self.redis.xgroup_delconsumer(stream, name, who)  # had none pending
                    removed += 1
        return removed


def _field(info: Mapping[Any, Any], name: str) -> Any:
    value = info.get(name)
    return info.get(name.encode()) if value is None else value


def _parse_id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _next_id(entry_id: str) -> tuple[int, int]:
    ms, seq = _parse_id(entry_id)
    return ms, seq + 1
