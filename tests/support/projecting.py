"""Helpers of the projector tests: games appended batch by batch as the rules service appends
them, a projector drained, the board model a fresh replay gives."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import redis.asyncio as aioredis

from eventstore import RedisEventStore
from eventstore.types import AppendRequest
from gameserver.projectors import Projector
from gameserver.projectors.board_projection import board_model
from gameserver.projectors.projector_runner import json_encoder
from renature import events as e
from renature.game import play, replay
from support.monitor import addresses, watching


async def append_batches(
    store: RedisEventStore, game_id: str, events: list[e.Event], *, hashed: bool = False
) -> None:
    """Append events in their command batches (a batch starts at an event with a cause), with
    each event's chain hash beside it as the rules service stores it when ``hashed``."""
    batches: list[list[e.Event]] = []
    for event in events:
        if event.cause is not None or not batches:
            batches.append([])
        batches[-1].append(event)
    version = await store.version(game_id)
    for batch in batches:
        if batch[-1].version <= version:
            continue
        request = AppendRequest(
            game_id,
            command_id=f"c{batch[0].version}",
            expected_version=batch[0].version - 1,
            events=[e.encode(ev) for ev in batch],
            outcome=b"ok",
            hashes=[ev.hash for ev in batch] if hashed else None,
        )
        (result,) = await store.append_many([request])
        assert result.__class__.__name__ == "Appended", result
        version = batch[-1].version


async def drain(projector: Projector[Any]) -> int:
    """Set the projector up and project every entry of its feeds; returns how many."""
    await projector.setup()
    total = 0
    while read := await projector.poll():
        total += read
    return total


def expected_board(events: list[e.Event]) -> bytes:
    """The board model of a fresh replay of ``events``."""
    state = replay(events)
    assert state is not None
    return json_encoder.encode(board_model(state))


async def commands_per_cached_batch(
    store: RedisEventStore,
    redis: aioredis.Redis,
    make: Callable[[RedisEventStore, aioredis.Redis], Projector[Any]],
    game_id: str,
) -> tuple[list[str], list[e.Event]]:
    """The commands a projector (``make`` on a client of its own) sends Redis for four batches
    of a game whose fold it has cached, one poll each (Redis's MONITOR counts what clients send,
    a script's own calls apart); with the game's events."""
    events, _ = play(2, "one-trip", ["random", "random"], game_id=game_id)
    where = redis.connection_pool.connection_kwargs
    own = aioredis.Redis(host=where["host"], port=where["port"], client_name="projector")
    projector = make(RedisEventStore(own), own)
    starts = [i for i, ev in enumerate(events) if ev.cause is not None]
    await append_batches(store, game_id, events[: starts[4]])
    await drain(projector)  # the fold is cached from here on
    projector_at = await addresses(redis, "projector")
    async with watching(redis) as sent:
        for cut in starts[5:9]:
            await append_batches(store, game_id, events[:cut])
            assert await projector.poll() > 0
    await own.aclose()
    return sent.names(projector_at), events


async def append_games(
    store: RedisEventStore, games: Mapping[str, tuple[int, str]], *, hashed: bool = False
) -> dict[str, list[e.Event]]:
    """Whole games of random bots (players and seed per game id), appended batch by batch as
    the rules service would (`append_batches`)."""
    played = {}
    for game_id, (players, seed) in games.items():
        events, _ = play(players, seed, ["random"] * players, game_id=game_id)
        await append_batches(store, game_id, events, hashed=hashed)
        played[game_id] = events
    return played
