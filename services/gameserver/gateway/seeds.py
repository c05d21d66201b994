"""Games dealt from a caller-chosen seed (tests, bots, tournaments).

The rules service generates every game's seed itself and ignores a seed inside ``CreateGame``
(whoever knows the seed knows every hand). It keeps the seed in its seed vault and creates it
with SET NX, i.e. it uses a seed that is already there. A chosen seed is therefore put into the
vault, by the gateway staging it *before* the game is created (write only: the rules service
moves it into the vault at the creation), with a fresh secret salt and marked as chosen
(`gameserver.runtime.seed_vault`); the service then deals from it, commits to it with the
salt (so even a tiny chosen seed cannot be brute-forced from the commitment), records
``chosen_seed`` in ``GameCreated`` (every seat's view says so) and reveals seed and salt at the
end as usual. The gateway only stages seeds (SET NX, expiring); it never reads, overwrites or
deletes a seed: the ACL refuses it every key of the vault.
"""

from __future__ import annotations

from redis.asyncio import Redis

from eventstore import KeyLayout
from gameserver.runtime.seed_vault import RedisSeedVault


async def choose_seed(redis: Redis, layout: KeyLayout, game_id: str, seed: str) -> bool:
    """Store ``seed`` as the seed of the not yet created ``game_id``; False if it had one."""
    return await RedisSeedVault(redis, layout).choose(game_id, seed)
