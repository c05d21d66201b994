"""A stateful test of the event store: hypothesis drives random sequences of appends (fitting,
stale, ahead, retried, racing, hash-linked with the right or a wrong prev_hash), recorded
outcomes, reads from versions and feed reads (acknowledged, or left pending by a reader that
crashes and claimed by another) against a plain model, on the in-memory store and on a real
Redis, and checks every answer and the whole store after each step.

The model is the contract in a few lines: a game is a list of (event, meta, hash); a command id
of a game has at most one outcome, and once it has one every later append with that id is a
`Duplicate` of it; an append is written only at the game's version and, when it names a
prev_hash, only onto that last event; the feeds carry every event once, in each game's order.

The run is bounded (`BOUNDED`): 30 sequences of at most 30 steps each, about 10 s for both back
ends on a busy two-core machine; hypothesis' example database replays a failure found earlier
first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest
import redis.asyncio as aioredis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from eventstore import (
    Appended,
    AppendRequest,
    AppendResult,
    Conflict,
    Duplicate,
    EventStore,
    RedisEventStore,
)
from eventstore.memory_store import MemoryEventStore

T = TypeVar("T")

BOUNDED = settings(
    max_examples=30,
    stateful_step_count=30,
    deadline=None,  # a Redis round trip on a busy 2-core machine is no failure
    suppress_health_check=[HealthCheck.too_slow],
)

GAMES = ("game-1", "g-alpha", "renature-42")  # partitions 12, and two others
COMMAND_IDS = tuple(f"c{i}" for i in range(6))  # few, so that ids come back (retries)

games = st.sampled_from(GAMES)
command_ids = st.sampled_from(COMMAND_IDS)
batches = st.lists(st.binary(max_size=6), min_size=1, max_size=3)
metas = st.none() | st.binary(min_size=1, max_size=4)
outcomes = st.binary(min_size=1, max_size=4)
offsets = st.integers(-3, 3)  # how far an expected version is from the game's version
links = st.sampled_from(["none", "right", "wrong"])  # the prev_hash an append names


class StoreModel(RuleBasedStateMachine):
    """Runs every step on ``store`` and on the model, and compares them."""

    def __init__(self, store: EventStore, run: Callable[[Awaitable[Any]], Any]) -> None:
        super().__init__()
        self.store = store
        self.run = run
        # Per game: (event, meta, hash) in version order.
        self.streams: dict[str, list[tuple[bytes, bytes | None, str | None]]] = {
            g: [] for g in GAMES
        }
        self.outcomes: dict[tuple[str, str], bytes] = {}
        # Feed entries read and acknowledged, and read by a reader that crashed (pending).
        self.fed: dict[str, list[tuple[int, bytes, str | None]]] = {g: [] for g in GAMES}
        self.pending: set[tuple[str, int, bytes, str | None]] = set()
        self.hashes_made = 0

    # -- the model -------------------------------------------------------------------------

    def expect(self, request: AppendRequest) -> AppendResult:
        """What the contract says an append answers, applying it to the model."""
        key = (request.game_id, request.command_id)
        stream = self.streams[request.game_id]
        if key in self.outcomes:
            return Duplicate(self.outcomes[key])
        if request.expected_version != len(stream):
            return Conflict(request.expected_version, len(stream))
        last_hash = stream[-1][2] if stream else ""  # None: stored without one, not checkable
        checked = request.prev_hash is not None and last_hash is not None
        if checked and request.prev_hash != last_hash:
            return Conflict(request.expected_version, len(stream))
        first = len(stream) + 1
        hashes: list[str | None] = (
            list(request.hashes) if request.hashes else [None] * len(request.events)
        )
        for i, (data, event_hash) in enumerate(zip(request.events, hashes, strict=True)):
            stream.append((data, request.batch_meta if i == 0 else None, event_hash))
        self.outcomes[key] = request.outcome
        return Appended(first, len(stream))

    def expected_version(self, game: str, offset: int) -> int:
        return max(0, len(self.streams[game]) + offset)

    def request(
        self, game: str, command: str, offset: int, events: list[bytes], meta: bytes | None,
        link: str,
    ) -> AppendRequest:  # fmt: skip
        """An append decided ``offset`` versions away from the game, linked by ``link``: no
        hashes ("none"), hashes and the stored last hash ("right") or another one ("wrong")."""
        version = self.expected_version(game, offset)
        outcome = _outcome(game, command)
        if link == "none":
            return AppendRequest(game, command, version, events, outcome, meta)
        stream = self.streams[game]
        last = (stream[version - 1][2] if 0 < version <= len(stream) else None) or ""
        prev = last if link == "right" else f"other-{last}"
        hashes = []
        for _ in events:
            self.hashes_made += 1
            hashes.append(f"h{self.hashes_made}")
        return AppendRequest(game, command, version, events, outcome, meta, prev, hashes)

    # -- rules -----------------------------------------------------------------------------

    @initialize()
    def create_a_consumer_group(self) -> None:
        for p in self.store.partitions():
            assert self.run(self.store.ensure_group(p, "model")) is True

    @rule(game=games, command=command_ids, offset=offsets, events=batches, meta=metas)
    def append(
        self, game: str, command: str, offset: int, events: list[bytes], meta: bytes | None
    ) -> None:
        request = self.request(game, command, offset, events, meta, "none")
        result = self.run(
            self.store.append(
                game,
                command_id=command,
                expected_version=request.expected_version,
                events=events,
                outcome=request.outcome,
                batch_meta=meta,
            )
        )
        assert result == self.expect(request)

    @rule(
        requests=st.lists(
            st.tuples(games, command_ids, offsets, batches, metas, links), min_size=1, max_size=4
        )
    )
    def append_many(
        self, requests: list[tuple[str, str, int, list[bytes], bytes | None, str]]
    ) -> None:
        # Expected versions and hashes are taken from the model as the requests are built, so a
        # request for a game that an earlier one of the same trip extends is usually a conflict:
        # as on Redis.
        batch = [self.request(*fields) for fields in requests]
        results = self.run(self.store.append_many(batch))
        assert results == [self.expect(request) for request in batch]

    @rule(game=games, command=command_ids, outcome=outcomes)
    def record_a_rejection(self, game: str, command: str, outcome: bytes) -> None:
        answer = self.run(self.store.record_outcome(game, command, outcome))
        previous = self.outcomes.get((game, command))
        assert answer == (None if previous is None else Duplicate(previous))
        self.outcomes.setdefault((game, command), outcome)

    @rule(game=games, events=batches)
    def race_two_writers(self, game: str, events: list[bytes]) -> None:
        """Two fresh commands decided on the same version: exactly one is written."""
        at = len(self.streams[game])
        fresh = [f"race-{len(self.outcomes)}-{i}" for i in range(2)]
        results = self.run(
            _gather(
                *(
                    self.store.append(
                        game, command_id=cid, expected_version=at, events=events, outcome=b"won"
                    )
                    for cid in fresh
                )
            )
        )
        winners = [i for i, r in enumerate(results) if isinstance(r, Appended)]
        assert len(winners) == 1, results
        (winner,) = winners
        assert results[winner] == self.expect(
            AppendRequest(game, fresh[winner], at, events, b"won")
        )
        assert results[1 - winner] == Conflict(at, at + len(events))

    @rule(game=games, command=command_ids)
    def outcome_of_a_command(self, game: str, command: str) -> None:
        stored = self.run(self.store.get_outcome(game, command))
        assert stored == self.outcomes.get((game, command))

    @rule(game=games, after=st.integers(0, 12), limit=st.none() | st.integers(0, 5))
    def read_from_a_version(self, game: str, after: int, limit: int | None) -> None:
        stored = self.run(self.store.read(game, after_version=after, limit=limit))
        model = list(enumerate(self.streams[game], start=1))[after:]
        model = model if limit is None else model[:limit]
        assert [(s.version, s.data, s.meta, s.hash) for s in stored] == [
            (version, *event) for version, event in model
        ]

    @rule(pairs=st.lists(st.tuples(games, st.integers(0, 12)), max_size=4))
    def read_many_games(self, pairs: list[tuple[str, int]]) -> None:
        pages = self.run(self.store.read_many(pairs))
        assert [[s.data for s in page] for page in pages] == [
            [data for data, _, _ in self.streams[g][after:]] for g, after in pairs
        ]

    @precondition(lambda self: any(self.streams.values()))
    @rule()
    def consume_the_feeds(self) -> None:
        """A projector's read: every new event once, in its game's order; then acknowledged."""
        partitions = self.store.partitions()
        entries = self.run(self.store.read_group("model", "reader", partitions, count=1000))
        for entry in entries:
            assert entry.partition == self.store.partition_of(entry.game_id)
            self.fed[entry.game_id].append((entry.version, entry.data, entry.hash))
        for p in partitions:
            ids = [f.entry_id for f in entries if f.partition == p]
            assert self.run(self.store.ack(p, "model", ids)) == len(ids)
        self.check_every_event_was_delivered_once()

    @precondition(lambda self: any(self.streams.values()))
    @rule(count=st.integers(1, 3))
    def a_reader_crashes_before_acknowledging(self, count: int) -> None:
        """Up to ``count`` new entries per feed are taken and never acknowledged."""
        taken = self.run(self.store.read_group("model", "crashed", self.store.partitions(), count))
        self.pending |= {(f.game_id, f.version, f.data, f.hash) for f in taken}

    @precondition(lambda self: self.pending)
    @rule()
    def another_reader_takes_over_what_is_pending(self) -> None:
        """Autoclaim hands the crashed reader's entries to another, which acknowledges them."""
        claimed = []
        for p in self.store.partitions():
            mine = self.run(self.store.autoclaim(p, "model", "rescuer", 0, count=1000))
            assert self.run(self.store.ack(p, "model", [f.entry_id for f in mine])) == len(mine)
            claimed += mine
        assert {(f.game_id, f.version, f.data, f.hash) for f in claimed} == self.pending
        for game, version, data, event_hash in self.pending:
            self.fed[game].append((version, data, event_hash))
        self.pending.clear()
        self.check_every_event_was_delivered_once(everything=False)

    def check_every_event_was_delivered_once(self, *, everything: bool = True) -> None:
        """Acknowledged and pending entries together are each game's first events, each once
        (all of them, when the last read took ``everything`` new)."""
        for game, stream in self.streams.items():
            held = [(v, d, h) for g, v, d, h in self.pending if g == game]
            delivered = sorted(self.fed[game] + held, key=lambda item: item[0])
            events = [(v, data, h) for v, (data, _, h) in enumerate(stream, 1)]
            assert delivered == (events if everything else events[: len(delivered)])

    # -- after every step ------------------------------------------------------------------

    @invariant()
    def versions_and_games_match(self) -> None:
        for game, stream in self.streams.items():
            assert self.run(self.store.version(game)) == len(stream)
        assert self.run(self.store.list_games()) == sorted(g for g, s in self.streams.items() if s)


def _outcome(game: str, command: str) -> bytes:
    """A different outcome for every (game, command): a mixed-up lookup cannot pass."""
    return f"{game}/{command}".encode()


async def _gather(*calls: Awaitable[T]) -> list[T]:
    return list(await asyncio.gather(*calls))


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop of the test's own: hypothesis runs the steps synchronously."""
    loop = asyncio.new_event_loop()
    try:
        yield loop
    finally:
        loop.close()


def test_the_memory_store_behaves_as_the_model(loop: asyncio.AbstractEventLoop) -> None:
    run_state_machine_as_test(
        lambda: StoreModel(MemoryEventStore(), loop.run_until_complete),  # type: ignore[arg-type]  # hypothesis runs any factory of a machine; its stub says a class
        settings=BOUNDED,
    )


@pytest.mark.redis
def test_the_redis_store_behaves_as_the_model(
    loop: asyncio.AbstractEventLoop, redis_url: str
) -> None:
    client = aioredis.Redis.from_url(redis_url)

    def fresh() -> StoreModel:
        loop.run_until_complete(client.flushall())  # every sequence starts on an empty store
        return StoreModel(RedisEventStore(client), loop.run_until_complete)

    try:
        run_state_machine_as_test(fresh, settings=BOUNDED)  # type: ignore[arg-type]  # a factory, as above
    finally:
        loop.run_until_complete(client.aclose())
