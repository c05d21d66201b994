"""The rules service against a real Redis: commands over the bus, events in the store."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import AsyncIterator
from typing import Any, cast

import msgspec
import pytest
import redis.asyncio as aioredis
from faststream.redis import RedisBroker
from redis import exceptions as redis_errors
from redis.asyncio.client import PubSub
from structlog.contextvars import merge_contextvars
from structlog.testing import capture_logs

from devkit.redis_server import RedisServer
from devkit.waiting import eventually
from eventstore import RedisEventStore, StoredEvent
from gameserver.rules.rules_service import (
    BatchMeta,
    CommandHandler,
    RedisSeedVault,
    RulesService,
)
from gameserver.runtime import rules_client, seed_vault
from gameserver.runtime.bus import COMMAND_PARTITIONS, CommandEnvelope, Reply
from gameserver.runtime.bus import command_digest as digest
from gameserver.runtime.rules_client import CommandTimeout, RulesClient, send_command
from gameserver.runtime.settings import Settings
from renature import commands as c
from renature import events as e
from renature.bots import make_bot
from renature.deal import commitment
from renature.errors import RuleError
from renature.game import replay
from renature.rules import execute
from renature.state import GameState
from support.monitor import watching
from support.pending import left_pending

pytestmark = pytest.mark.redis

GAME = "g-rules"


@pytest.fixture
async def store(redis: aioredis.Redis) -> RedisEventStore:
    return RedisEventStore(redis)


@pytest.fixture
async def service(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[RulesService]:
    async with RulesService(Settings.of(redis_url=redis_url, consumer="rules-a")) as running:
        yield running


@pytest.fixture
async def client(service: RulesService, redis_url: str) -> AsyncIterator[RedisBroker]:
    async with RedisBroker(redis_url) as broker:
        yield broker


def envelope(command: msgspec.Struct, command_id: str, seat: int | None = None) -> CommandEnvelope:
    return CommandEnvelope(game_id=GAME, command_id=command_id, command=command, seat=seat)


async def setup_game(client: RedisBroker, players: int = 2) -> list[Reply]:
    commands: list[c.AnyCommand] = [
        c.CreateGame(game_id=GAME, players=players, seed=""),
        *(c.JoinGame(seat=s, name=f"p{s}") for s in range(players)),
        c.StartGame(),
    ]
    return [
        await send_command(client, envelope(cmd, f"setup-{i}"), timeout=5)
        for i, cmd in enumerate(commands)
    ]


async def state_of(store: RedisEventStore) -> GameState:
    state = replay(e.decode(ev.data) for ev in await store.read(GAME))
    assert state is not None
    return state


async def test_accepted_command_is_appended_and_answered(
    client: RedisBroker, store: RedisEventStore
) -> None:
    create = c.CreateGame(GAME, 2, seed="")
    reply = await send_command(client, envelope(create, "create"), 5)

    assert reply == Reply("accepted", GAME, "create", 1, 1, 1, command_digest=digest(create))
    stored = await store.read(GAME)
    assert [ev.version for ev in stored] == [1]
    assert isinstance(e.decode(stored[0].data), e.GameCreated)
    meta = msgspec.json.decode(stored[0].meta or b"", type=BatchMeta)
    assert meta.command_id == "create"
    assert meta.game is msgspec.UNSET  # a Renature stream's meta is as it always was
    stored_command = msgspec.json.decode(meta.command, type=c.AnyCommand)
    assert stored_command == c.CreateGame(GAME, 2, seed="")  # the seed is never stored here
    assert meta.time.endswith("+00:00")


async def test_plain_redis_client_gets_the_same_reply(
    service: RulesService, redis: aioredis.Redis
) -> None:
    reply = await send_command(redis, envelope(c.CreateGame(GAME, 3, seed=""), "create"), 5)
    assert reply.status == "accepted"
    assert reply.last_version == 1


async def test_out_of_turn_command_is_rejected_and_appends_nothing(
    client: RedisBroker, store: RedisEventStore
) -> None:
    await setup_game(client)
    before = await store.version(GAME)
    state = await state_of(store)
    wrong_seat = 1 - state.current
    command = c.EndTurn(seat=wrong_seat)

    reply = await send_command(client, envelope(command, "early", seat=wrong_seat), 5)

    expected_error = _rule_error(state, command)
    assert reply.status == "rejected"
    assert (reply.code, reply.message) == (expected_error.code, expected_error.message)
    assert await store.version(GAME) == before


async def test_seat_must_match_the_authenticated_seat(
    client: RedisBroker, store: RedisEventStore
) -> None:
    await setup_game(client)
    reply = await send_command(client, envelope(c.EndTurn(seat=0), "spoof", seat=1), 5)
    assert (reply.status, reply.code) == ("rejected", "not_your_seat")


async def test_duplicate_command_id_returns_the_first_reply(
    client: RedisBroker, store: RedisEventStore
) -> None:
    first = await send_command(client, envelope(c.CreateGame(GAME, 2, seed=""), "create"), 5)
    join = envelope(c.JoinGame(seat=0, name="ann"), "join-0")
    accepted = await send_command(client, join, 5)
    version = await store.version(GAME)

    again = await send_command(client, join, 5)
    create_again = await send_command(client, envelope(c.CreateGame(GAME, 2, ""), "create"), 5)

    assert again == accepted
    assert create_again == first
    assert await store.version(GAME) == version


async def test_malformed_message_is_answered_not_crashing(
    client: RedisBroker, store: RedisEventStore
) -> None:
    message = await client.request(
        b'{"game_id": "g-rules", "command_id": "bad", "command": {"type": "Nope"}}',
        stream=COMMAND_PARTITIONS.stream_of("g-rules"),
        timeout=5,
    )
    reply = msgspec.json.decode(message.body, type=Reply)
    assert (reply.status, reply.code, reply.command_id) == ("rejected", "malformed", "bad")
    junk = await client.request(b"not json at all", stream="rn:{p03}:commands", timeout=5)
    assert msgspec.json.decode(junk.body, type=Reply).code == "malformed"
    # and the service still works
    ok = await send_command(client, envelope(c.CreateGame(GAME, 2, seed=""), "create"), 5)
    assert ok.status == "accepted"


async def test_two_instances_racing_never_fork_the_game(
    service: RulesService, redis_url: str, store: RedisEventStore
) -> None:
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-b")),
        RedisBroker(redis_url) as client,
    ):
        await send_command(client, envelope(c.CreateGame(GAME, 4, seed=""), "create"), 5)
        # Every seat is claimed twice under different ids, all at once: two instances decide
        # them concurrently, conflicts force reloads, and exactly one claim per seat wins.
        joins = [
            envelope(c.JoinGame(seat=seat, name=f"{who}{seat}"), f"join-{who}-{seat}")
            for seat in range(4)
            for who in "xy"
        ]
        replies = await asyncio.gather(*(send_command(client, j, 10) for j in joins))

    stored = await store.read(GAME)
    assert [ev.version for ev in stored] == list(range(1, len(stored) + 1))
    assert sorted(r.status for r in replies) == ["accepted"] * 4 + ["rejected"] * 4
    accepted_versions = sorted(r.last_version for r in replies if r.status == "accepted")
    assert accepted_versions == [2, 3, 4, 5]
    _assert_legal_history(stored)


async def test_handlers_racing_on_one_store_never_fork(
    redis: aioredis.Redis, store: RedisEventStore
) -> None:
    """Two handlers with their own caches, no bus: the race is as tight as it gets."""
    handlers = [CommandHandler(store, RedisSeedVault(redis, store.layout)) for _ in range(2)]
    await handlers[0].handle(envelope(c.CreateGame(GAME, 4, seed=""), "create"))
    joins = [envelope(c.JoinGame(seat=s % 4, name=f"n{s}"), f"join-{s}") for s in range(12)]
    with capture_logs() as logs:
        replies = await asyncio.gather(*(handlers[i % 2].handle(j) for i, j in enumerate(joins)))
    assert any(entry["event"] == "append_conflict" for entry in logs), "no race happened"
    decoded = [msgspec.json.decode(r, type=Reply) for r in replies]
    assert sum(r.status == "accepted" for r in decoded) == 4
    stored = await store.read(GAME)
    assert [ev.version for ev in stored] == [1, 2, 3, 4, 5]
    _assert_legal_history(stored)


async def test_whole_game_ends_with_the_committed_seed_revealed(
    client: RedisBroker,
    store: RedisEventStore,
    redis: aioredis.Redis,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="renature.rules")  # a line per accepted command
    with capture_logs(processors=[merge_contextvars]) as logs:
        replies = await setup_game(client)
        bots = [make_bot("random", f"bot-{seat}") for seat in range(2)]
        state = await state_of(store)
        turn = 0
        while state.phase != "finished":
            assert state.phase != "final_scoring", "the service must finish the game itself"
            seat = state.current
            command = bots[seat].choose(state, seat)
            reply = await send_command(client, envelope(command, f"move-{turn}", seat), 5)
            assert reply.status == "accepted", reply
            replies.append(reply)
            state = await state_of(store)
            turn += 1

    stored = [e.decode(ev.data) for ev in await store.read(GAME)]
    created, ended = stored[0], stored[-1]
    assert isinstance(created, e.GameCreated)
    assert isinstance(ended, e.GameEnded)
    seed = ended.seed
    assert len(seed) == 64
    assert len(ended.salt) == 64  # the commitment is salted: no seed can be tested against it
    assert created.seed_commitment == commitment(seed, ended.salt)
    assert hashlib.sha256(seed.encode()).hexdigest() not in created.seed_commitment
    assert not created.chosen_seed
    seed_key = RedisSeedVault(redis, store.layout).key(GAME)
    assert seed_key == f"rn:{{p{store.partition_of(GAME):02d}}}:seed:{GAME}"
    assert seed_vault.decode(cast(bytes, await redis.get(seed_key))) == seed_vault.SeedSecret(
        seed, ended.salt
    )
    assert all(seed not in msgspec.json.encode(r).decode() for r in replies)
    assert logs, "the service logs every command"
    assert all(seed not in repr(entry) for entry in logs)
    finishes = [entry for entry in logs if str(entry.get("command_id", "")).endswith(":finish")]
    assert any(entry["event"] == "command_accepted" for entry in finishes)
    assert all(entry.get("game_id") == GAME for entry in logs if "command_id" in entry)


def _rule_error(state: GameState, command: c.AnyCommand) -> RuleError:

    try:
        execute(state, command)
    except RuleError as error:
        return error
    raise AssertionError("the command was expected to break a rule")


def _assert_legal_history(stored: list[StoredEvent]) -> None:
    """Re-deciding every stored batch from its provenance gives exactly the stored events."""
    state: GameState | None = None
    index = 0
    while index < len(stored):
        meta = msgspec.json.decode(stored[index].meta or b"", type=BatchMeta)
        command = msgspec.json.decode(meta.command, type=c.AnyCommand)
        assert not isinstance(command, c.CreateGame | c.FinishGame) or index == 0
        if isinstance(command, c.CreateGame):
            created = e.decode(stored[0].data)
            state = replay([created])
            index += 1
            continue
        events, state = execute(state, command, command_id=meta.command_id, time=meta.time)
        assert [e.encode(ev) for ev in events] == [
            s.data for s in stored[index : index + len(events)]
        ]
        index += len(events)


async def test_a_command_left_pending_by_a_dead_instance_is_reclaimed(
    redis: aioredis.Redis, redis_url: str, store: RedisEventStore
) -> None:
    stream = COMMAND_PARTITIONS.stream_of(GAME)
    await left_pending(redis, envelope(c.CreateGame(GAME, 2, seed=""), "orphan"), stream, "dead")

    settings = Settings.of(redis_url=redis_url, consumer="rescuer", reclaim_idle_ms=100)

    async def decided() -> bool:
        return await store.version(GAME) == 1

    async with RulesService(settings):
        await eventually(decided, "the orphaned command decided")
    assert await store.version(GAME) == 1
    assert (await redis.xpending(stream, "rules"))["pending"] == 0


async def test_one_rules_client_channel_serves_many_concurrent_commands(
    service: RulesService, redis: aioredis.Redis, store: RedisEventStore
) -> None:
    """Replies share one channel and still reach the request they answer (correlation id)."""
    games = [f"g-client-{i}" for i in range(24)]
    async with RulesClient(redis) as client:
        replies = await asyncio.gather(
            *(
                client.send(CommandEnvelope(g, "create", c.CreateGame(g, 2 + i % 3, "")), 5)
                for i, g in enumerate(games)
            )
        )
        assert [(r.game_id, r.status) for r in replies] == [(g, "accepted") for g in games]
        channels = await redis.pubsub_channels("rn:reply:*")
        assert channels == [client.channel.encode()]
    assert [await store.version(g) for g in games] == [1] * len(games)
    assert await redis.pubsub_channels("rn:reply:*") == []


async def test_rules_client_times_out_when_no_service_answers(redis: aioredis.Redis) -> None:
    async with RulesClient(redis) as client:
        with pytest.raises(CommandTimeout, match="resend it with the same command id"):
            await client.send(envelope(c.CreateGame(GAME, 2, ""), "lonely"), timeout=0.3)


async def test_rules_client_resubscribes_after_its_connection_is_killed(
    service: RulesService, redis: aioredis.Redis
) -> None:
    async with RulesClient(redis) as client:
        first = await client.send(envelope(c.CreateGame(GAME, 2, ""), "create"), 5)
        assert first.status == "accepted"
        killed = await redis.client_kill_filter(_type="pubsub")
        assert killed >= 1
        for _ in range(50):  # until the listener has reconnected and resubscribed
            if await redis.pubsub_channels(client.channel):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the reply channel was not subscribed again within 2.5 s")
        join = await client.send(envelope(c.JoinGame(0, "ann"), "join", seat=0), 5)
        assert join.status == "accepted"


async def test_a_command_waiting_when_its_channel_is_killed_is_sent_again_once(
    redis: aioredis.Redis,
) -> None:
    """Redis closes the reply channel's connection while a command waits for its reply (a
    reply published meanwhile would be lost: a 504 after a Redis restart in the suite). The
    listener sees the failure (redis-py does not reconnect the subscription behind its back),
    subscribes the channel again, and sends the waiting command once more, once: the same
    envelope, its command id. No rules service runs: the command stream shows what was sent."""

    async def sent() -> int:
        return sum([await redis.xlen(key) async for key in redis.scan_iter(match="*commands*")])

    with capture_logs() as logs:
        async with RulesClient(redis) as client:
            waiting = asyncio.create_task(client.send(envelope(c.CreateGame(GAME, 2, ""), "c"), 10))
            await eventually(lambda: _equals(sent(), 1), "the command sent")
            assert await redis.client_kill_filter(_type="pubsub") == 1
            await eventually(lambda: _equals(sent(), 2), "the command sent again", timeout=5)
            await eventually(
                lambda: _subscribed(redis, client.channel), "subscribed again", timeout=5
            )
            await asyncio.sleep(0.5)
            assert await sent() == 2  # not twice more
            waiting.cancel()
    events = [line["event"] for line in logs]
    assert events.count("reply_channel_lost") == 1
    assert events.count("reply_channel_back") == 1


async def _subscribed(redis: aioredis.Redis, channel: str) -> bool:
    return bool(await redis.pubsub_channels(channel) == [channel.encode()])


async def _equals(count: Any, expected: int) -> bool:
    return bool(await count == expected)


class _Breaks:
    """A reply channel's read that fails once with ``error``, as redis-py's reads have after a
    lost connection (an exception of no Redis kind, a CancelledError nobody asked for)."""

    def __init__(self, error: BaseException) -> None:
        self.error: BaseException | None = error

    async def __call__(self, original: Any, *args: Any, **kwargs: Any) -> Any:
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        return await original(*args, **kwargs)


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("pubsub connection not set"),
        asyncio.CancelledError(),
        AttributeError("_reader"),
    ],
    ids=["runtime-error", "leaked-cancellation", "attribute-error"],
)
async def test_the_reply_channel_outlives_any_error_of_a_read(
    service: RulesService,
    redis: aioredis.Redis,
    monkeypatch: pytest.MonkeyPatch,
    error: BaseException,
) -> None:
    """Whatever a read of the reply channel raises, the channel is subscribed again and the
    next commands get their replies (a listener that died once left every later command of the
    gateway to time out, for good)."""
    breaks = _Breaks(error)
    original = rules_client._next_message

    async def next_message(pubsub: PubSub, timeout: float) -> Any:
        return await breaks(original, pubsub, timeout)

    async with RulesClient(redis) as client:
        monkeypatch.setattr(rules_client, "_next_message", next_message)
        for _ in range(100):  # until the read has failed once
            if breaks.error is None:
                break
            await asyncio.sleep(0.05)
        assert breaks.error is None  # it failed
        first = await client.send(envelope(c.CreateGame(GAME, 2, ""), "create"), 5)
        assert first.status == "accepted"
        assert await redis.pubsub_channels(client.channel) == [client.channel.encode()]
        join = await client.send(envelope(c.JoinGame(0, "ann"), "join", seat=0), 5)
        assert join.status == "accepted"


async def test_a_command_sent_while_the_channel_was_lost_gets_its_reply_once_it_is_back(
    service: RulesService, redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command sent before the reply channel is subscribed again (a busy machine: the wait
    for it ran out) has its reply published while nobody listens; once the channel is back,
    every command still waiting is sent again with its command id, and gets its reply (a
    gateway answered 504 after its command timeout here, seen in the suite right after a
    Redis restart)."""
    monkeypatch.setattr(rules_client, "RESUBSCRIBE_WAIT_S", 0.05)
    breaks = _Breaks(redis_errors.ConnectionError("Connection closed by server."))
    read, subscribe = rules_client._next_message, RulesClient._subscribe

    async def next_message(pubsub: PubSub, timeout: float) -> Any:
        return await breaks(read, pubsub, timeout)

    slow = asyncio.Event()

    async def slowly(self: RulesClient) -> Any:
        if slow.is_set():
            await asyncio.sleep(1.0)  # the commands below go out meanwhile
        return await subscribe(self)

    monkeypatch.setattr(RulesClient, "_subscribe", slowly)
    async with RulesClient(redis) as client:
        slow.set()
        monkeypatch.setattr(rules_client, "_next_message", next_message)
        await eventually(lambda: _not_subscribed(redis, client.channel), "the channel lost")
        reply = await client.send(envelope(c.CreateGame(GAME, 2, ""), "create"), 5)
        assert reply.status == "accepted"
        assert [ev.version for ev in await RedisEventStore(redis).read(GAME)] == [1]  # once
        join = await client.send(envelope(c.JoinGame(0, "ann"), "join", seat=0), 5)
        assert join.status == "accepted"


async def _not_subscribed(redis: aioredis.Redis, channel: str) -> bool:
    return not await redis.pubsub_channels(channel)


async def test_a_reply_channel_redis_stopped_holding_is_found_by_its_probe_and_made_again(
    service: RulesService, redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subscription gone without an error (the connection healed, the channel not subscribed
    again: nothing raised, nothing arrives) is found by the probe the quiet channel sends
    itself, and subscribed again."""
    monkeypatch.setattr(rules_client, "PROBE_AFTER_S", 0.3)

    async def forgets(self: PubSub, connection: object) -> None:
        """redis-py reconnecting without subscribing its channels again."""

    monkeypatch.setattr(PubSub, "on_connect", forgets)  # before the callback is registered
    async with RulesClient(redis) as client:
        assert await redis.client_kill_filter(_type="pubsub") >= 1
        for _ in range(100):  # reconnected, not subscribed; then the probe is missed
            if await redis.pubsub_channels(client.channel):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the reply channel was not subscribed again within 5 s")
        reply = await client.send(envelope(c.CreateGame(GAME, 2, ""), "create"), 5)
        assert reply.status == "accepted"


async def test_a_listener_that_ended_is_started_again_by_the_next_command(
    service: RulesService, redis: aioredis.Redis
) -> None:
    async with RulesClient(redis) as client:
        listener = client._listener
        assert listener is not None
        listener.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listener
        reply = await client.send(envelope(c.CreateGame(GAME, 2, ""), "create"), 5)
        assert reply.status == "accepted"
        assert client._listener is not listener
        assert client._listener is not None
        assert not client._listener.done()


async def test_rules_client_raises_redis_errors_rather_than_waiting() -> None:
    """A command that cannot be published fails at once (the gateway answers 503), instead of
    waiting for a reply that cannot come."""
    with RedisServer() as server:
        redis = aioredis.Redis.from_url(server.url)
        async with RulesClient(redis) as client:
            server.stop(kill=True)
            with pytest.raises(redis_errors.ConnectionError):
                await client.send(envelope(c.CreateGame(GAME, 2, ""), "create"), timeout=30)
        await redis.aclose()


async def test_an_accepted_command_is_answered_and_acknowledged_by_its_append(
    client: RedisBroker, redis: aioredis.Redis, store: RedisEventStore
) -> None:
    """On one Redis a move costs the service its read and its append: the append script
    publishes the reply and acknowledges the command (Redis's MONITOR: no ``PUBLISH`` and no
    ``XACK`` sent by a client). A refused command has no append: the service publishes its
    reply and acknowledges it itself. Nothing stays pending either way."""
    await setup_game(client)
    state = await state_of(store)
    mover = state.current
    async with watching(redis) as sent:
        early = envelope(c.EndTurn(seat=1 - mover), "early", seat=1 - mover)
        reply = await send_command(client, early, 5)
    assert reply.status == "rejected"
    assert {"PUBLISH", "XACK"} <= set(sent.names())

    bot = make_bot("random", "settled")
    async with watching(redis) as sent:
        command = bot.choose(await state_of(store), mover)
        reply = await send_command(client, envelope(command, "move", mover), 5)
    assert reply.status == "accepted"
    assert reply.last_version == await store.version(GAME)
    assert "EVALSHA" in sent.names()
    assert not {"PUBLISH", "XACK"} & set(sent.names())
    stream = COMMAND_PARTITIONS.stream_of(GAME)
    assert (await redis.xpending(stream, "rules"))["pending"] == 0
