"""The Lua script behind `RedisEventStore.append`.

Everything that must be atomic lives in one script because Redis runs a script without
interleaving any other command: the idempotency check, the version check and every write of a
command's batch happen as one step, so two writers can never both append at the same version
(no fork) and a retried command can never be appended twice.

The version check compares content too: the caller names the hash of the last event it decided
on, and the script refuses (a conflict) a stream whose last stored hash differs, so a command
decided on a history that is no longer there (lost in a power cut, then refilled to the same
version by other commands) can never be appended onto another one.

Redis does not roll back a script that fails half way, so the script reads and checks everything
first and only then writes; the writes themselves cannot fail on a well-formed stream (an
explicit id greater than the last one is always accepted).
"""

from __future__ import annotations

from typing import Final

# Reply tags; the script returns {tag, ...} so the Python side can dispatch on the first item.
TAG_APPENDED: Final = b"appended"
TAG_CONFLICT: Final = b"conflict"
TAG_DUPLICATE: Final = b"duplicate"

APPEND_LUA: Final = r"""
-- KEYS[1]  game stream      <prefix>:{pNN}:game:<game_id>
-- KEYS[2]  outcome key      <prefix>:{pNN}:cmd:<game_id>:<command_id>
-- KEYS[3]  partition feed   <prefix>:{pNN}:feed
-- KEYS[4]  games set        <prefix>:{pNN}:games
-- ARGV[1]  expected version (the version the caller decided on)
-- ARGV[2]  outcome bytes stored under KEYS[2] when the append succeeds
-- ARGV[3]  outcome TTL in seconds (0 = keep forever)
-- ARGV[4]  game id (written into each feed entry and the games set)
-- ARGV[5]  "1" when ARGV[6] holds batch meta, "0" otherwise
-- ARGV[6]  batch meta (stored on the first entry of the batch only)
-- ARGV[7]  "1" when ARGV[8] is the hash the caller decided on (the hash of the last event it
--          folded, "" before the first event), "0" for a version-only check
-- ARGV[8]  that expected last hash
-- ARGV[9]  "1" when every event is followed by its hash, "0" when the events come alone
-- ARGV[10] "1" when the append settles its command (KEYS[5], ARGV[11..14]), "0" otherwise
-- ARGV[11] the channel the reply is published on, ARGV[12] the reply
-- ARGV[13] the consumer group of KEYS[5] that read the command, ARGV[14] its entry id
-- ARGV[15..] the events in order, each followed by its hash when ARGV[9] is "1"
-- KEYS[5]  (settling only) the stream the command came in on
-- KEYS[1..4] share the {pNN} hash tag, so the script is valid on Redis Cluster; a settling
-- append names a command stream and a channel of other slots: one Redis only.

-- 1. Idempotency first: a command seen before is answered with its stored outcome, even if
--    the caller's expected version is stale by now (the retry of an accepted command).
local outcome = redis.call('GET', KEYS[2])
if outcome then
  return {'duplicate', outcome}
end

-- 2. The version is the sequence part of the last entry id (ids are 0-<version>); the last
--    hash is that entry's `hash` field ("" for an empty stream, false for an entry stored
--    without one).
local actual = 0
local stored_hash = ''
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last > 0 then
  local seq = string.match(last[1][1], '^0%-(%d+)$')
  if not seq then
    return redis.error_reply('ERR eventstore: unexpected entry id ' .. last[1][1])
  end
  actual = tonumber(seq)
  stored_hash = false
  local fields = last[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'hash' then
      stored_hash = fields[i + 1]
    end
  end
end

local expected = tonumber(ARGV[1])
if actual ~= expected then
  return {'conflict', actual, stored_hash or ''}
end
-- 3. Content, not only the count: the stream must end in the very event the caller decided
--    on. A stream that lost events and was refilled to the same version by other commands
--    (a regression after a power cut) is another history: appending there would fork it.
if ARGV[7] == '1' and stored_hash and stored_hash ~= ARGV[8] then
  return {'conflict', actual, stored_hash}
end

-- 4. All checks passed: write the batch. Nothing below can fail on a well-formed stream.
local game = ARGV[4]
local has_meta = ARGV[5] == '1'
local step = 1
if ARGV[9] == '1' then
  step = 2
end
local first = actual + 1
local version = actual
local FIRST_EVENT = 15
for i = FIRST_EVENT, #ARGV, step do
  version = version + 1
  local event = ARGV[i]
  local entry = {'event', event}
  local feed = {'game', game, 'version', version, 'event', event}
  if step == 2 then
    table.insert(entry, 'hash')
    table.insert(entry, ARGV[i + 1])
    table.insert(feed, 'hash')
    table.insert(feed, ARGV[i + 1])
  end
  if i == FIRST_EVENT and has_meta then
    table.insert(entry, 'meta')
    table.insert(entry, ARGV[6])
  end
  redis.call('XADD', KEYS[1], '0-' .. version, unpack(entry))
  redis.call('XADD', KEYS[3], '*', unpack(feed))
end
redis.call('SADD', KEYS[4], game)

-- 5. Remember the outcome so a retry of this command is answered without appending again.
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('SET', KEYS[2], ARGV[2], 'EX', ttl)
else
  redis.call('SET', KEYS[2], ARGV[2])
end

-- 6. Settled here (one Redis): the command acknowledged and its reply published in the same
--    step. Redis writes a reply or a message to its receivers only after this step's fsync
--    (appendfsync always), so the reply never outruns the append's durability.
if ARGV[10] == '1' then
  redis.call('XACK', KEYS[5], ARGV[13], ARGV[14])
  redis.call('PUBLISH', ARGV[11], ARGV[12])
end
return {'appended', first, version}
"""
