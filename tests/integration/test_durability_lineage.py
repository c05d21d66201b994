"""After a regression (the last writes lost, as in a power cut under ``appendfsync everysec``)
nothing is decided, stored or served on the lost events, on a real Redis.

A regression is made by hand: the newest entries of a game stream are deleted (``XDEL``), as a
truncated append-only file would lose them, while the services keep their caches.

- The rules service decides on the surviving history, not on its cached state: a command legal
  there is accepted (no stale refusal stored as its permanent outcome).
- A rules instance whose cache is of the lost history cannot append onto the history that
  replaced it (the prev_hash check) and decides again on the new one: no fork, the chain links.
- The gateway serves the surviving version, not the cached one.
- A projector whose model is ahead of the stream, or of another history, rebuilds it: models
  equal a fresh replay of the stream.
"""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from eventstore import Appended, AppendRequest, RedisEventStore
from gameplatform.interface import HostedState
from gameserver.gateway.game_states import GameStates
from gameserver.projectors import BoardProjection, Projector
from gameserver.projectors.board_projection import board_model
from gameserver.projectors.projector_runner import json_encoder
from gameserver.rules.rules_service import CommandHandler
from gameserver.runtime import bus
from gameserver.runtime.seed_vault import RedisSeedVault
from renature import commands as c
from renature import events as e
from renature.game import play, replay
from renature.state import GameState

pytestmark = pytest.mark.redis

GAME = "g-lineage"


async def lose_after(
    redis: aioredis.Redis, store: RedisEventStore, game_id: str, keep: int
) -> None:
    """The stream loses every event after version ``keep`` (a truncated AOF)."""
    key = store.layout.game_key(game_id)
    version = await store.version(game_id)
    ids = [f"0-{v}" for v in range(keep + 1, version + 1)]
    if ids:
        await redis.xdel(key, *ids)
        # As if the stream had never gone further (a truncated AOF holds no later last id).
        await redis.execute_command("XSETID", key, f"0-{keep}")  # type: ignore[no-untyped-call]  # redis-py leaves it untyped
    assert await store.version(game_id) == keep


def handler_on(redis: aioredis.Redis, store: RedisEventStore) -> CommandHandler:
    return CommandHandler(store=store, seeds=RedisSeedVault(redis, store.layout))


async def send(
    handler: CommandHandler, command: c.Command, command_id: str, seat: int | None
) -> bus.Reply:
    envelope = bus.CommandEnvelope(GAME, command_id, command, seat)
    return bus.reply_decoder.decode((await handler.handle_batch([bus.encoder.encode(envelope)]))[0])


def chain_links(events: list[e.Event]) -> bool:
    prev = ""
    for version, event in enumerate(events, start=1):
        if event.version != version or event.prev_hash != prev or event.hash != e.chain_hash(event):
            return False
        prev = event.hash
    return True


async def stored_events(store: RedisEventStore, game_id: str = GAME) -> list[e.Event]:
    return [e.decode(s.data) for s in await store.read(game_id)]


async def test_no_stale_refusal_after_a_regression(redis: aioredis.Redis) -> None:
    store = RedisEventStore(redis)
    handler = handler_on(redis, store)
    assert (
        await send(handler, c.CreateGame(GAME, 2, "", "base"), "create", None)
    ).status == "accepted"
    assert (await send(handler, c.JoinGame(0, "Ada"), "j0", 0)).status == "accepted"
    assert (await send(handler, c.JoinGame(1, "Bo"), "j1", 1)).status == "accepted"
    await lose_after(redis, store, GAME, 2)  # Bo's join is lost; the cache still has it
    await redis.delete(store.layout.command_key(GAME, "j1"))  # its outcome too

    again = await send(handler, c.JoinGame(1, "Cy"), "j1-again", 1)
    assert again.status == "accepted", again  # not "seat_taken" decided on the lost join
    assert again.first_version == 3
    events = await stored_events(store)
    assert chain_links(events)
    state = replay(events)
    assert state is not None
    assert [seat.name for seat in state.seats] == ["Ada", "Cy"]


async def test_a_stale_instance_cannot_fork_the_stream(redis: aioredis.Redis) -> None:
    """Instance A cached the lost history; instance B refilled the stream to the same version
    with other events. A's next command must not be appended onto B's history as if it were its
    own: the version matches, the content does not."""
    store = RedisEventStore(redis)
    a, b = handler_on(redis, store), handler_on(redis, store)
    await send(a, c.CreateGame(GAME, 2, "", "base"), "create", None)
    await send(a, c.JoinGame(0, "Ada"), "j0", 0)
    await send(a, c.JoinGame(1, "Bo"), "j1", 1)  # A's cache: version 3, Bo at seat 1
    await lose_after(redis, store, GAME, 2)
    await redis.delete(store.layout.command_key(GAME, "j1"))
    refill = await send(b, c.JoinGame(1, "Cy"), "j1-b", 1)  # B refills version 3: Cy
    assert refill.status == "accepted"
    assert refill.last_version == 3

    start = await send(a, c.StartGame(), "start", 0)
    assert start.status == "accepted", start
    events = await stored_events(store)
    assert chain_links(events), "the stream forked"
    state = replay(events)
    assert state is not None
    assert [seat.name for seat in state.seats] == ["Ada", "Cy"]


async def test_the_gateway_serves_the_surviving_version(redis: aioredis.Redis) -> None:
    store = RedisEventStore(redis)
    handler = handler_on(redis, store)
    await send(handler, c.CreateGame(GAME, 2, "", "base"), "create", None)
    await send(handler, c.JoinGame(0, "Ada"), "j0", 0)
    games = GameStates(store)
    assert (await games.state(GAME)).version == 2
    await lose_after(redis, store, GAME, 1)
    state = await games.state(GAME)
    assert isinstance(state, GameState)
    assert state.version == 1
    assert state.seats[0].name is None


def hashed_batches(events: list[e.Event]) -> list[list[e.Event]]:
    batches: list[list[e.Event]] = []
    for event in events:
        if event.cause is not None or not batches:
            batches.append([])
        batches[-1].append(event)
    return batches


async def append_hashed(store: RedisEventStore, game_id: str, events: list[e.Event]) -> None:
    """Append in command batches, each event with its hash and each batch on its predecessor."""
    version = await store.version(game_id)
    for batch in hashed_batches(events):
        if batch[-1].version <= version:
            continue
        request = AppendRequest(
            game_id,
            f"c{batch[0].version}-{batch[0].hash[:8]}",
            batch[0].version - 1,
            [e.encode(ev) for ev in batch],
            b"ok",
            None,
            batch[0].prev_hash,
            [ev.hash for ev in batch],
        )
        (result,) = await store.append_many([request])
        assert isinstance(result, Appended), result
        version = batch[-1].version


async def drain(projector: Projector[HostedState]) -> None:
    while await projector.poll():
        pass


@pytest.mark.parametrize("bots", [("greedy", "greedy"), ("random", "greedy")])
async def test_a_projector_rebuilds_a_model_of_a_lost_history(
    redis: aioredis.Redis, bots: tuple[str, str]
) -> None:
    store = RedisEventStore(redis)
    lost, _ = play(2, "seed-lineage", ["random", "random"], game_id=GAME)
    survivor, _ = play(2, "seed-lineage", list(bots), game_id=GAME)
    keep = next(i for i, (x, y) in enumerate(zip(lost, survivor, strict=False)) if x.hash != y.hash)
    projector: Projector[HostedState] = Projector(store, redis, BoardProjection(), "b1", batch=50)
    await projector.setup()
    await append_hashed(store, GAME, lost)
    await drain(projector)
    assert (await projector.read_model(GAME) or (0, b""))[0] == len(lost)

    await lose_after(redis, store, GAME, keep)  # the model is now ahead of the stream
    await append_hashed(store, GAME, survivor)  # and the stream refilled with another history
    await drain(projector)

    state = replay(survivor)
    assert state is not None
    assert await projector.read_model(GAME) == (
        len(survivor),
        json_encoder.encode(board_model(state)),
    )
    assert chain_links(await stored_events(store))
