"""UNIT tests of the rules service handler: no Redis at all.

The handler talks to the in-memory event store (`eventstore.memory_store`, which passes the same
contract suite as the Redis store), wrapped here to count its round trips and to lose races on
demand. The real store and the real
bus (batches read with XREADGROUP, replies over pub/sub) are covered by
tests/integration/test_rules_service.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec
import pytest
from structlog.testing import capture_logs

from eventstore import AppendRequest, AppendResult, Conflict, StoredEvent
from eventstore.memory_store import MemoryEventStore
from gameplatform import get_game
from gameserver.rules.rules_service import CommandHandler
from gameserver.runtime.bus import CommandEnvelope, Reply
from gameserver.runtime.bus import command_digest as digest
from renature import commands as c
from renature import events as e
from renature.rules import execute, legal_actions
from renature.state import GameState

GAME = "g-unit"
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


class CountingStore(MemoryEventStore):
    """The in-memory store, counting its round trips and losing races on demand."""

    def __init__(self) -> None:
        super().__init__()
        self.conflicts_to_inject = 0
        self.round_trips: list[str] = []

    async def append(
        self,
        game_id: str,
        *,
        command_id: str,
        expected_version: int,
        events: Sequence[bytes],
        outcome: bytes,
        batch_meta: bytes | None = None,
    ) -> AppendResult:
        request = AppendRequest(game_id, command_id, expected_version, events, outcome, batch_meta)
        return (await self._append_each([request]))[0]

    async def append_many(self, requests: Sequence[AppendRequest]) -> list[AppendResult]:
        self.round_trips.append("append_many")
        return await self._append_each(requests)

    async def _append_each(self, requests: Sequence[AppendRequest]) -> list[AppendResult]:
        """Each request appended alone; an injected conflict (a lost race) writes nothing."""
        results: list[AppendResult] = []
        for r in requests:
            if self.conflicts_to_inject and await self.get_outcome(r.game_id, r.command_id) is None:
                self.conflicts_to_inject -= 1
                results.append(Conflict(r.expected_version, await self.version(r.game_id)))
            else:
                results += await super().append_many([r])
        return results

    async def read_many(self, requests: Sequence[tuple[str, int]]) -> list[list[StoredEvent]]:
        self.round_trips.append("read_many")
        return await super().read_many(requests)


class FakeSeeds:
    def __init__(self) -> None:
        self.seeds: dict[str, str] = {}

    async def create(self, game_id: str) -> str:
        return self.seeds.setdefault(game_id, "ab" * 32)

    async def get(self, game_id: str) -> str | None:
        return self.seeds.get(game_id)


@pytest.fixture
def store() -> CountingStore:
    return CountingStore()


@pytest.fixture
def handler(store: CountingStore) -> CommandHandler:
    return CommandHandler(store, FakeSeeds(), clock=lambda: NOW)


def env(command: c.AnyCommand, command_id: str, seat: int | None = None) -> CommandEnvelope:
    return CommandEnvelope(GAME, command_id, command, seat)


def body(
    command: msgspec.Struct, command_id: str, seat: int | None = None, game: str = GAME
) -> bytes:
    return msgspec.json.encode(CommandEnvelope(game, command_id, command, seat))


async def replies_to(handler: CommandHandler, *bodies: bytes) -> list[Reply]:
    return [msgspec.json.decode(r, type=Reply) for r in await handler.handle_batch(bodies)]


async def test_create_game_takes_the_services_seed(
    handler: CommandHandler, store: CountingStore
) -> None:
    create = c.CreateGame(GAME, 2, seed="mine")
    (reply,) = await replies_to(handler, body(create, "create"))

    assert reply == Reply("accepted", GAME, "create", 1, 1, 1, command_digest=digest(create))
    created = e.decode((await store.read(GAME))[0].data)
    assert isinstance(created, e.GameCreated)
    # the client's seed is ignored: the commitment is to the service's seed
    assert created.seed_commitment == hashlib.sha256(("ab" * 32).encode()).hexdigest()
    assert created.cause is not None
    assert created.cause.command_id == "create"
    assert created.cause.time == NOW.isoformat()
    meta = msgspec.json.decode((await store.read(GAME))[0].meta or b"")
    assert meta["command"]["seed"] == ""
    assert meta["time"] == "2026-01-02T03:04:05+00:00"


async def test_rule_error_is_a_rejected_reply_and_appends_nothing(
    handler: CommandHandler, store: CountingStore
) -> None:
    await replies_to(handler, body(c.CreateGame(GAME, 2, ""), "create"))
    (reply,) = await replies_to(handler, body(c.StartGame(), "start"))

    assert reply.status == "rejected"
    assert reply.code == "wrong_phase"
    assert reply.message == "Seats [0, 1] have no player yet."
    assert await store.version(GAME) == 1
    assert await replies_to(handler, body(c.StartGame(), "start")) == [reply]  # stored


async def test_malformed_json_is_rejected(handler: CommandHandler) -> None:
    (reply,) = await replies_to(handler, b"{oops")
    assert (reply.status, reply.code) == ("rejected", "malformed")


async def test_a_batch_answers_every_message_in_its_order(
    handler: CommandHandler, store: CountingStore
) -> None:
    """Commands of one game are taken in order; other games and bad messages in between are
    answered in their places."""
    other = "g-other"
    replies = await replies_to(
        handler,
        body(c.CreateGame(GAME, 2, ""), "create"),
        body(c.JoinGame(0, "ann"), "j0", seat=0),
        b"not json",
        body(c.CreateGame(other, 3, ""), "create", game=other),
        body(c.JoinGame(1, "bob"), "j1", seat=1),
        body(c.JoinGame(1, "cat"), "j1-again", seat=1),  # seat taken by then
        body(c.StartGame(), "start"),
        body(c.EndTurn(seat=0), "spoof", seat=1),
    )
    assert [(r.status, r.code, r.command_id, r.last_version) for r in replies] == [
        ("accepted", None, "create", 1),
        ("accepted", None, "j0", 2),
        ("rejected", "malformed", "", 0),
        ("accepted", None, "create", 1),
        ("accepted", None, "j1", 3),
        ("rejected", "invalid_command", "j1-again", 0),
        ("accepted", None, "start", replies[6].last_version),
        ("rejected", "not_your_seat", "spoof", 0),
    ]
    assert replies[6].first_version == 4
    assert await store.version(GAME) == replies[6].last_version
    assert await store.version(other) == 1


async def test_one_round_trip_per_round_for_all_games_of_a_batch(
    handler: CommandHandler, store: CountingStore
) -> None:
    """Games this instance holds are decided on their cached states: one append for all of
    them, no read; games it does not hold are read first, all in one read."""
    games = [f"g{i}" for i in range(10)]
    await replies_to(handler, *(body(c.CreateGame(g, 2, ""), "create", game=g) for g in games))
    store.round_trips.clear()

    replies = await replies_to(
        handler, *(body(c.JoinGame(0, "ann"), "join", seat=0, game=g) for g in games)
    )
    assert {r.status for r in replies} == {"accepted"}
    assert store.round_trips == ["append_many"]

    handler.cache.clear()  # a restarted instance: nothing cached
    store.round_trips.clear()
    replies = await replies_to(
        handler, *(body(c.JoinGame(1, "bob"), "join-1", seat=1, game=g) for g in games)
    )
    assert {r.status for r in replies} == {"accepted"}
    assert store.round_trips == ["read_many", "append_many"]


async def test_a_stale_cache_neither_forks_nor_refuses_what_the_stream_allows(
    store: CountingStore,
) -> None:
    """Another instance moved the game on: a command accepted on the stale cached state
    conflicts and is decided again on the stream; one the stale state refuses is decided
    again on the stream before it is refused."""
    one = CommandHandler(store, FakeSeeds(), clock=lambda: NOW)
    two = CommandHandler(store, FakeSeeds(), clock=lambda: NOW)
    await replies_to(one, body(c.CreateGame(GAME, 2, ""), "create"))
    await replies_to(two, body(c.JoinGame(0, "ann"), "join-0", seat=0))  # one is stale now

    (joined,) = await replies_to(one, body(c.JoinGame(1, "bob"), "join-1", seat=1))
    assert (joined.status, joined.first_version) == ("accepted", 3)
    await replies_to(two, body(c.StartGame(), "start", seat=0))  # one is stale again
    fresh = await two.load(GAME)
    assert isinstance(fresh, GameState)
    move = legal_actions(fresh, fresh.current)[0]  # the stale state (a lobby) refuses it
    (moved,) = await replies_to(one, body(move, "move", seat=fresh.current))
    assert (moved.status, moved.first_version) == ("accepted", fresh.version + 1)
    versions = [event.version for event in await store.read(GAME)]
    assert versions == list(range(1, len(versions) + 1))


async def test_a_lost_race_in_a_batch_is_decided_again(
    handler: CommandHandler, store: CountingStore
) -> None:
    await replies_to(handler, body(c.CreateGame(GAME, 2, ""), "create"))
    store.conflicts_to_inject = 1
    with capture_logs() as logs:
        (reply,) = await replies_to(handler, body(c.JoinGame(0, "ann"), "join", seat=0))
    assert reply.status == "accepted"
    assert [entry["event"] for entry in logs].count("append_conflict") == 1
    assert await store.version(GAME) == 2


async def test_a_retried_command_in_a_batch_gets_the_first_reply(
    handler: CommandHandler, store: CountingStore
) -> None:
    await replies_to(handler, body(c.CreateGame(GAME, 2, ""), "create"))
    join = body(c.JoinGame(0, "ann"), "join", seat=0)
    first, again = await replies_to(handler, join, join)
    assert first == again
    assert first.status == "accepted"
    assert await store.version(GAME) == 2


async def test_a_command_id_used_again_for_another_command_is_refused(
    handler: CommandHandler, store: CountingStore
) -> None:
    """A retry gets its first reply; the same id with another command is no retry, whether the
    first was accepted or rejected, and never reports the first command's outcome."""
    await replies_to(handler, body(c.CreateGame(GAME, 2, ""), "create"))
    (joined,) = await replies_to(handler, body(c.JoinGame(0, "ann"), "join", seat=0))
    (refused,) = await replies_to(handler, body(c.StartGame(), "start"))  # seat 1 is empty
    ids = ("create", "join", "start")  # every command id this test uses
    outcomes = [await store.get_outcome(GAME, i) for i in ids]

    reused = await replies_to(
        handler,
        body(c.JoinGame(0, "ann"), "join", seat=0),
        body(c.JoinGame(1, "bob"), "join", seat=1),
        body(c.JoinGame(1, "bob"), "start", seat=1),
    )
    (alone,) = await replies_to(handler, body(c.JoinGame(1, "cat"), "join", seat=1))

    assert joined.status == "accepted"
    assert refused.code == "wrong_phase"
    assert reused[0] == joined
    assert [(r.status, r.code) for r in [*reused[1:], alone]] == [
        ("rejected", "command_id_reused")
    ] * 3
    assert reused[1].message == (
        "This command id was used for another command; give every new command a new id."
    )
    assert await store.version(GAME) == 2
    assert [await store.get_outcome(GAME, i) for i in ids] == outcomes  # the first ones stand


async def test_a_failing_store_answers_internal_error_and_appends_nothing(
    handler: CommandHandler, store: CountingStore
) -> None:
    await replies_to(handler, body(c.CreateGame(GAME, 2, ""), "create"))

    async def broken(*_: object, **__: object) -> list[AppendResult]:
        raise RuntimeError("disk on fire")

    store.append_many = broken  # type: ignore[method-assign]  # a store that fails
    (reply,) = await replies_to(handler, body(c.JoinGame(0, "ann"), "join", seat=0))
    assert (reply.status, reply.code) == ("rejected", "internal_error")
    assert await store.version(GAME) == 1


async def test_conflict_reloads_and_decides_again(
    handler: CommandHandler, store: CountingStore
) -> None:
    await handler.handle(env(c.CreateGame(GAME, 2, ""), "create"))
    store.conflicts_to_inject = 3
    with capture_logs() as logs:
        reply = msgspec.json.decode(
            await handler.handle(env(c.JoinGame(0, "ann"), "join")), type=Reply
        )
    assert reply.status == "accepted"
    assert [entry["event"] for entry in logs].count("append_conflict") == 3


async def test_endless_contention_gives_up_with_a_retryable_rejection(
    handler: CommandHandler, store: CountingStore
) -> None:
    await handler.handle(env(c.CreateGame(GAME, 2, ""), "create"))
    store.conflicts_to_inject = 10_000
    reply = msgspec.json.decode(await handler.handle(env(c.JoinGame(0, "a"), "j")), type=Reply)
    assert (reply.status, reply.code) == ("rejected", "contended")
    assert await store.get_outcome(GAME, "j") is None  # not final: a retry may succeed


async def test_another_instance_appending_is_seen_through_the_cache(
    store: CountingStore,
) -> None:
    one = CommandHandler(store, FakeSeeds(), clock=lambda: NOW)
    two = CommandHandler(store, FakeSeeds(), clock=lambda: NOW)
    await one.handle(env(c.CreateGame(GAME, 2, ""), "create"))
    await one.load(GAME)
    await two.handle(env(c.JoinGame(0, "ann"), "join-0"))  # one's cache is now stale
    reply = msgspec.json.decode(await one.handle(env(c.JoinGame(0, "bob"), "j")), type=Reply)
    assert (reply.status, reply.code) == ("rejected", "invalid_command")
    assert reply.message == "Seat 0 is taken already."


def test_seeds_are_redacted_from_stored_commands() -> None:
    redacted = get_game("renature").public_command  # what the handler records, by the game
    assert redacted(c.CreateGame(GAME, 2, seed="secret")) == c.CreateGame(GAME, 2, seed="")
    assert redacted(c.FinishGame(seed="secret")) == c.FinishGame(seed="")
    assert redacted(c.StartGame()) == c.StartGame()


async def test_unexpected_failure_is_an_internal_error_reply(
    handler: CommandHandler, store: CountingStore
) -> None:
    async def broken(*_: object, **__: object) -> bytes | None:
        raise RuntimeError("disk on fire")

    store.get_outcome = broken  # type: ignore[method-assign]  # a store that fails
    reply = msgspec.json.decode(await handler.handle(env(c.StartGame(), "x")), type=Reply)
    assert (reply.status, reply.code) == ("rejected", "internal_error")


async def test_refused_creation_stores_no_seed(store: CountingStore) -> None:
    seeds = FakeSeeds()
    handler = CommandHandler(store, seeds, clock=lambda: NOW)
    reply = msgspec.json.decode(
        await handler.handle(env(c.CreateGame(GAME, 7, seed=""), "create")), type=Reply
    )
    assert (reply.status, reply.code) == ("rejected", "invalid_command")
    assert seeds.seeds == {}
    assert not await store.exists(GAME)


async def test_a_retried_last_move_finishes_a_game_its_first_instance_left_unfinished(
    store: CountingStore,
) -> None:
    """The instance that appended a game's last move died before the finish; the player's
    retry reaches another instance whose cache is one move behind. Its append meets the
    first one (a duplicate), and the game is finished on the stream's state, not left
    waiting for the seed on the cache's."""
    one = CommandHandler(store, FakeSeeds(), clock=lambda: NOW)
    dying = CommandHandler(store, one.seeds, clock=lambda: NOW)

    async def died_first(*_: object) -> None:
        return None

    dying.finish_if_due = died_first  # type: ignore[method-assign,assignment]
    setup = [c.CreateGame(GAME, 2, ""), c.JoinGame(0, "ann"), c.JoinGame(1, "bob"), c.StartGame()]
    for n, command in enumerate(setup):
        seat = getattr(command, "seat", 0 if isinstance(command, c.StartGame) else None)
        (reply,) = await replies_to(one, body(command, f"set-up-{n}", seat=seat))
        assert reply.status == "accepted"
    for n in range(1000):
        state = await one.load(GAME)
        assert isinstance(state, GameState)
        seat, move = state.current, legal_actions(state, state.current)[0]
        _, after = execute(state, move)
        last = after.phase == "final_scoring"
        moving = dying if last else one  # one's cache stays one move behind the last
        (reply,) = await replies_to(moving, body(move, f"m{n}", seat=seat))
        assert reply.status == "accepted"
        if last:
            break
    waiting = await dying.load(GAME)  # (one's cache: still the state before the last move)
    assert isinstance(waiting, GameState)
    assert waiting.phase == "final_scoring"

    (again,) = await replies_to(one, body(move, f"m{n}", seat=seat))
    assert again == reply
    finished = await one.load(GAME)
    assert isinstance(finished, GameState)
    assert finished.phase == "finished"
