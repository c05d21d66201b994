"""The read model hashes of one projection: ``<prefix>:{pNN}:<name>:<game_id>`` = {version,
model, hash}, in the game's hash slot (``KeyLayout.model_key``).

A model, the version it reflects and that version's event hash are written together by one Lua
script (`WRITE_MODEL_LUA`), only when the new version is greater than the stored one, or the
stored model is not on the stream's history. A redelivered, reclaimed or late entry can
therefore never move a model back in time. The same script acknowledges the feed entries the
model was folded from (an `Ack`: the partition feed shares the game's hash slot) once the model
is written or kept, never when it was refused: a projector's batch costs the read and one
round trip. Writes go by ``EVALSHA`` of the registered script, in one pipeline for any number
of games; a Redis that lost its scripts (restarted) is given the script again and the writes
retried once.
"""

from __future__ import annotations

from collections.abc import Sequence

from redis.asyncio import Redis
from redis.exceptions import NoScriptError

from eventstore import KeyLayout
from eventstore.lanes import Lanes
from eventstore.redis_values import text

WRITE_MODEL_LUA = r"""
-- KEYS[1..n] the read model hashes of one game (n = ARGV[3]: one per projection written
-- together); KEYS[n+1] the game's stream; KEYS[n+2] (optional) the partition feed the models'
-- entries came from (every key in the game's hash slot)
-- ARGV[1] version; ARGV[2] hash of the event at ARGV[1] ('' if unknown); ARGV[3] n;
-- ARGV[4..3+n] the models' bytes; ARGV[4+n] (with the feed) the consumer group; ARGV[5+n..]
-- the feed entries to acknowledge
-- Returns 1: written (one model at least); 0: kept (every stored model is as new and on the
-- stream's history); -1: refused, the fold is not on the stream's history (rebuild it from
-- the stream), nothing written; the entries are acknowledged unless refused.
local n = tonumber(ARGV[3])
local stream = KEYS[n + 1]
local function hash_at(version)
  local entry = redis.call('XRANGE', stream, '0-' .. version, '0-' .. version)
  if #entry == 0 then
    if redis.call('EXISTS', stream) == 0 then
      return nil  -- a finished game packed by the retention service: no stream to check
    end
    return false
  end
  local fields = entry[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'hash' then
      return fields[i + 1]
    end
  end
  return nil
end
local function write_one(key, model)
  local stored = redis.call('HMGET', key, 'version', 'hash')
  local current = tonumber(stored[1] or '0')
  if current >= tonumber(ARGV[1]) then
    if not stored[2] or stored[2] == '' then
      return 0
    end
    local at = hash_at(current)
    if at == nil or at == stored[2] then
      return 0
    end
  end
  redis.call('HSET', key, 'version', ARGV[1], 'model', model, 'hash', ARGV[2])
  return 1
end
local function write()
  if ARGV[2] ~= '' then
    local at = hash_at(tonumber(ARGV[1]))
    if at == false or (at ~= nil and at ~= ARGV[2]) then
      return -1
    end
  end
  local result = 0
  for i = 1, n do
    if write_one(KEYS[i], ARGV[3 + i]) == 1 then
      result = 1
    end
  end
  return result
end
local result = write()
local feed = KEYS[n + 2]
if result ~= -1 and feed and #ARGV > 4 + n then
  redis.call('XACK', feed, ARGV[4 + n], unpack(ARGV, 5 + n))
end
return result
"""

Write = tuple[str, int, tuple[bytes, ...], str]
"""Models to write: game id, version, the models' bytes (one per name of the `ReadModels`, in
its order), hash of the event at that version."""

Ack = tuple[int, str, Sequence[str]]
"""Feed entries a write acknowledges once the model is written or kept: the partition, the
consumer group, the entry ids."""

Stored = tuple[bytes | str | None, bytes | str | None]
"""A stored model's version and hash (None where there is none)."""


class ReadModels:
    """Reads and conditionally writes the models of the projection ``name`` (and of ``more``:
    projections folded together, whose models of a game are written by one script, at one
    version)."""

    def __init__(self, redis: Redis, layout: KeyLayout, name: str, *more: str) -> None:
        self.redis = redis
        self._lanes = Lanes(redis)
        self.layout = layout
        self.name = name
        self.names = (name, *more)
        self._script = redis.register_script(WRITE_MODEL_LUA)

    def key(self, game_id: str) -> str:
        return self.layout.model_key(self.name, game_id)

    def keys(self, game_id: str) -> list[str]:
        """The game's model of every name, in order."""
        return [self.layout.model_key(name, game_id) for name in self.names]

    async def read(self, game_id: str) -> tuple[int, bytes] | None:
        """The stored model of a game and the version it reflects, if there is one."""
        version, model = await self.redis.hmget(self.key(game_id), ["version", "model"])
        if version is None or model is None:
            return None
        return int(version), model if isinstance(model, bytes) else model.encode()

    async def stored(self, game_ids: Sequence[str]) -> list[Stored]:
        """The stored version and hash of each game's model, in one round trip; of models
        written together, the oldest (the one a write has to bring forward)."""
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            for key in self.keys(game_id):
                pipe.hmget(key, ["version", "hash"])
        found = [(version, hash_) for version, hash_ in await pipe.execute()]
        width = len(self.names)
        return [
            min(found[at : at + width], key=lambda stored: int(stored[0] or 0))
            for at in range(0, len(found), width)
        ]

    async def write(self, write: Write) -> int:
        """`write_many` for one model; a Redis error is raised."""
        (result,) = await self.write_many([write])
        if isinstance(result, Exception):
            raise result
        return result

    async def write_many(
        self, writes: Sequence[Write], acks: Sequence[Ack | None] | None = None
    ) -> list[int | Exception]:
        """Per model: 1 written, 0 kept (as new), -1 refused (not on the stream's history), or
        the error of its write (the other writes go on). Each write's `Ack` (in ``acks``, in
        the order of ``writes``) is acknowledged by its write unless that was refused or
        failed."""
        acked = list(acks) if acks is not None else [None] * len(writes)
        results = await self._evalsha(writes, acked)
        lost = [n for n, result in enumerate(results) if isinstance(result, NoScriptError)]
        if lost:  # Redis restarted and forgot the script: load it, write those again
            await self.redis.script_load(WRITE_MODEL_LUA)
            again = await self._evalsha([writes[n] for n in lost], [acked[n] for n in lost])
            for n, result in zip(lost, again, strict=True):
                results[n] = result
        return results

    async def _evalsha(
        self, writes: Sequence[Write], acks: Sequence[Ack | None]
    ) -> list[int | Exception]:
        if not writes:
            return []
        calls: list[tuple[object, ...]] = []
        for (game_id, version, models, last_hash), ack in zip(writes, acks, strict=True):
            if len(models) != len(self.names):
                raise ValueError(f"{len(models)} models for {len(self.names)} names")
            keys = (*self.keys(game_id), self.layout.game_key(game_id))
            args: tuple[object, ...] = (version, last_hash, len(models), *models)
            if ack is not None:
                partition, group, ids = ack
                keys += (self.layout.feed_key(partition),)
                args += (group, *ids)
            # EVALSHA by name: a cluster pipeline refuses evalsha(), routes this by its keys
            calls.append(("EVALSHA", self._script.sha, len(keys), *keys, *args))
        results = await self._lanes.each_reply(calls)
        return [r if isinstance(r, Exception) else int(r) for r in results]

    async def drop_all(self, game_ids: Sequence[str]) -> None:
        """Delete the models of ``game_ids`` and any other model of these projections."""
        stray = [
            text(key)
            for name in self.names
            async for key in self.redis.scan_iter(match=self.layout.model_pattern(name))
        ]
        keys = sorted({*stray, *(key for game_id in game_ids for key in self.keys(game_id))})
        for start in range(0, len(keys), 500):
            await self.redis.delete(*keys[start : start + 500])
