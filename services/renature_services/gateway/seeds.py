"""Games dealt from a caller-chosen seed (tests, bots, tournaments).

The rules service generates every game's seed itself and ignores a seed inside ``CreateGame``
(whoever knows the seed knows every hand). It keeps the seed in its seed vault and creates it
with SET NX, i.e. it uses a seed that is already there. A chosen seed is therefore put into the
vault, by the gateway, *before* the game is created; the service then deals from it and reveals
it at the end as usual. The gateway marks such games (``seed: "chosen"`` in ``GET /games/{id}``)
so nobody mistakes them for games with a secret deal.
"""

from __future__ import annotations

from redis.asyncio import Redis

from renature_services.rules_service import RedisSeedVault
from renature_store import KeyLayout


async def choose_seed(redis: Redis, layout: KeyLayout, game_id: str, seed: str) -> bool:
    """Store ``seed`` as the seed of the not yet created ``game_id``; False if it had one."""
    key = RedisSeedVault(redis, layout).key(game_id)
    return bool(await redis.set(key, seed, nx=True))


async def forget_seed(redis: Redis, layout: KeyLayout, game_id: str) -> None:
    """Remove a chosen seed whose game the rules service refused to create."""
    await redis.delete(RedisSeedVault(redis, layout).key(game_id))
