"""The read model hashes of one projection: ``<prefix>:{pNN}:<name>:<game_id>`` = {version,
model, hash}, in the game's hash slot (``KeyLayout.model_key``).

A model, the version it reflects and that version's event hash are written together by one Lua
script (`WRITE_MODEL_LUA`), only when the new version is greater than the stored one, or the
stored model is not on the stream's history. A redelivered, reclaimed or late entry can
therefore never move a model back in time. Writes go by ``EVALSHA`` of the registered script,
in one pipeline for any number of games; a Redis that lost its scripts (restarted) is given the
script again and the writes retried once.
"""

from __future__ import annotations

from collections.abc import Sequence

from redis.asyncio import Redis
from redis.exceptions import NoScriptError

from eventstore import KeyLayout
from eventstore.redis_values import text

WRITE_MODEL_LUA = r"""
-- KEYS[1] read model hash; KEYS[2] the game's stream (same hash slot)
-- ARGV[1] version; ARGV[2] model bytes; ARGV[3] hash of the event at ARGV[1] ('' if unknown)
-- Returns 1: written; 0: kept (the stored model is as new and on the stream's history);
-- -1: refused, the fold is not on the stream's history (rebuild it from the stream).
local function hash_at(version)
  local entry = redis.call('XRANGE', KEYS[2], '0-' .. version, '0-' .. version)
  if #entry == 0 then
    if redis.call('EXISTS', KEYS[2]) == 0 then
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
local new = tonumber(ARGV[1])
if ARGV[3] ~= '' then
  local at = hash_at(new)
  if at == false or (at ~= nil and at ~= ARGV[3]) then
    return -1
  end
end
local stored = redis.call('HMGET', KEYS[1], 'version', 'hash')
local current = tonumber(stored[1] or '0')
if current >= new then
  if not stored[2] or stored[2] == '' then
    return 0
  end
  local at = hash_at(current)
  if at == nil or at == stored[2] then
    return 0
  end
end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'model', ARGV[2], 'hash', ARGV[3])
return 1
"""

Write = tuple[str, int, bytes, str]
"""A model to write: game id, version, model bytes, hash of the event at that version."""

Stored = tuple[bytes | str | None, bytes | str | None]
"""A stored model's version and hash (None where there is none)."""


class ReadModels:
    """Reads and conditionally writes the models of the projection ``name``."""

    def __init__(self, redis: Redis, layout: KeyLayout, name: str) -> None:
        self.redis = redis
        self.layout = layout
        self.name = name
        self._script = redis.register_script(WRITE_MODEL_LUA)

    def key(self, game_id: str) -> str:
        return self.layout.model_key(self.name, game_id)

    async def read(self, game_id: str) -> tuple[int, bytes] | None:
        """The stored model of a game and the version it reflects, if there is one."""
        version, model = await self.redis.hmget(self.key(game_id), ["version", "model"])
        if version is None or model is None:
            return None
        return int(version), model if isinstance(model, bytes) else model.encode()

    async def stored(self, game_ids: Sequence[str]) -> list[Stored]:
        """The stored version and hash of each game's model, in one round trip."""
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hmget(self.key(game_id), ["version", "hash"])
        return [(version, hash_) for version, hash_ in await pipe.execute()]

    async def write(self, write: Write) -> int:
        """`write_many` for one model; a Redis error is raised."""
        (result,) = await self.write_many([write])
        if isinstance(result, Exception):
            raise result
        return result

    async def write_many(self, writes: Sequence[Write]) -> list[int | Exception]:
        """Per model: 1 written, 0 kept (as new), -1 refused (not on the stream's history), or
        the error of its write (the other writes go on)."""
        results = await self._evalsha(writes)
        lost = [n for n, result in enumerate(results) if isinstance(result, NoScriptError)]
        if lost:  # Redis restarted and forgot the script: load it, write those again
            await self.redis.script_load(WRITE_MODEL_LUA)
            for n, result in zip(lost, await self._evalsha([writes[n] for n in lost]), strict=True):
                results[n] = result
        return results

    async def _evalsha(self, writes: Sequence[Write]) -> list[int | Exception]:
        if not writes:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for game_id, version, model, last_hash in writes:
            keys = (self.key(game_id), self.layout.game_key(game_id))
            # EVALSHA by name: a cluster pipeline refuses evalsha(), routes this by its keys
            pipe.execute_command("EVALSHA", self._script.sha, 2, *keys, version, model, last_hash)
        results = await pipe.execute(raise_on_error=False)
        return [r if isinstance(r, Exception) else int(r) for r in results]

    async def drop_all(self, game_ids: Sequence[str]) -> None:
        """Delete the models of ``game_ids`` and any other model of this projection."""
        stray = [
            text(key)
            async for key in self.redis.scan_iter(match=self.layout.model_pattern(self.name))
        ]
        keys = sorted({*stray, *(self.key(game_id) for game_id in game_ids)})
        for start in range(0, len(keys), 500):
            await self.redis.delete(*keys[start : start + 500])
