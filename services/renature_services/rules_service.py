"""The rules service: decode command envelopes, load the games, decide, append, reply.

A thin FastStream app. It consumes ``COMMAND_STREAM`` with the consumer group ``RULES_GROUP``
(one consumer name per process, so several instances share the work), a batch of up to
``MAX_BATCH`` envelopes per ``XREADGROUP``, and answers every envelope with a `Reply` on the
``reply_to`` pub/sub channel named in its headers, with the request's correlation id
(FastStream's request/reply wire format; see `renature_services.rules_client`).

A batch costs three round trips to Redis whatever its size: one pipeline reads what other
instances appended to the batch's games since the cached states, one runs the conditional
append script once per accepted command, and one publishes the replies and acknowledges the
batch. Commands of one game in one batch are taken in order, one per round. A command whose
append meets a conflict, and the rare commands that need the seed vault (creating and finishing
a game), go through the one-command path (`CommandHandler.handle`), which reloads and decides
again. A process that dies mid-batch leaves its messages pending, and a second subscriber takes
such messages over with ``XAUTOCLAIM`` once they are idle long enough.

Correctness never depends on there being one instance: appends are conditional on the version
the command was decided on, so two instances racing on one game cannot fork it (the loser
reloads and decides again), and a command id is answered at most once (idempotency keys of the
event store).

Seeds: the service always generates the seed of a new game itself (``secrets.token_hex(32)``,
and a salt for its commitment: `renature_services.seed_vault`) and ignores any seed a client
sent, because whoever knows the seed knows every hand and the whole draw order. The seed lives
in a secret key in the game's hash slot and is only read back to issue ``FinishGame`` when the
last domino is gone; the ``GameEnded`` event then reveals it with its salt.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec
from faststream import AckPolicy, FastStream
from faststream.message import StreamMessage
from faststream.redis import RedisBroker, StreamSub
from faststream.redis.message import bDATA_KEY as DATA_KEY
from faststream.redis.parser.binary import BinaryMessageFormatV1
from faststream.specification import AsyncAPI
from pydantic import WithJsonSchema
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from renature import commands as c
from renature import events as e
from renature.errors import RuleError
from renature.rules import evolve, execute
from renature.state import GameState
from renature_services import bus, healing
from renature_services.logging import bind_command, configure_logging, get_logger, stdlib_logger
from renature_services.seed_vault import RedisSeedVault, SeedVault, as_secret
from renature_services.settings import Settings
from renature_services.state_cache import (
    DEFAULT_MAX_GAMES,
    Cached,
    StaleCache,
    StateCache,
    cached_state,
    checked_fold,
    fold_states,
    read_from,
)
from renature_store import (
    Appended,
    AppendRequest,
    AppendResult,
    Conflict,
    Duplicate,
    EventStore,
    RedisEventStore,
    StoreUnavailableError,
)
from renature_store.keys import check_game_id

log = get_logger("renature.rules")

MAX_ATTEMPTS = 16
"""Decide/append rounds per command before giving up (each lost round means another command of
the same game was appended meanwhile, so this bounds only pathological contention)."""

FINISH_SUFFIX = ":finish"

MAX_BATCH = 256
"""Envelopes read per ``XREADGROUP`` and handled together (see the module docstring). Reading
at most this many at a time leaves the rest of the queue to the other instances of the group."""


class BatchMeta(msgspec.Struct, frozen=True):
    """Provenance stored with the first event of each appended batch (seeds redacted)."""

    command_id: str
    seat: int | None
    command: c.AnyCommand
    time: str


class _Ids(msgspec.Struct):
    """The ids of a malformed envelope, if they can be read at all (to address the reply)."""

    game_id: str = ""
    command_id: str = ""


_meta_encoder = msgspec.json.Encoder()


def utc_now() -> datetime:
    """The service clock (the rules core has none)."""
    return datetime.now(UTC)


def rejected(envelope: bus.CommandEnvelope, code: str, message: str) -> bus.Reply:
    return bus.Reply(
        status="rejected",
        game_id=envelope.game_id,
        command_id=envelope.command_id,
        code=code,
        message=message,
        command_digest=bus.command_digest(envelope.command),
    )


def answer_again(envelope: bus.CommandEnvelope, outcome: bytes) -> bytes:
    """The answer to a command id handled before: its stored outcome for a retry of the same
    command, a refusal when the id was used for another command (an idempotency key reused by
    mistake must not report a move the client did not make as accepted)."""
    digest = bus.reply_decoder.decode(outcome).command_digest
    if not digest or digest == bus.command_digest(envelope.command):
        return outcome
    with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
        log.info("command_id_reused", command=type(envelope.command).__name__)
    reused = rejected(
        envelope,
        "command_id_reused",
        "This command id was used for another command; give every new command a new id.",
    )
    return bus.encoder.encode(reused)


def redacted(command: c.AnyCommand) -> c.AnyCommand:
    """The command as it may be stored or shown: seeds blanked."""
    if isinstance(command, c.CreateGame | c.FinishGame):
        return msgspec.structs.replace(command, seed="", salt="")
    return command


def check_envelope(envelope: bus.CommandEnvelope) -> bus.Reply | None:
    """Reject envelopes that are well-formed JSON but inconsistent, before touching the store."""
    try:
        check_game_id(envelope.game_id)
    except ValueError as error:
        return rejected(envelope, "invalid_command", str(error))
    if not envelope.command_id:
        return rejected(envelope, "invalid_command", "A command needs a non-empty command id.")
    command = envelope.command
    if isinstance(command, c.CreateGame) and command.game_id != envelope.game_id:
        return rejected(envelope, "invalid_command", "The game id of CreateGame must match.")
    if envelope.seat is None and isinstance(command, c.SeatCommand):
        # Only a gateway that resolved a seat token may send a seat's move: an envelope put
        # on the command stream without a seat would act for any seat.
        return rejected(envelope, "seat_required", "A seat's command must name its sender's seat.")
    seat = getattr(command, "seat", None)
    if envelope.seat is not None and seat is not None and seat != envelope.seat:
        return rejected(
            envelope, "not_your_seat", f"You play seat {envelope.seat}, not seat {seat}."
        )
    return None


@dataclass(frozen=True, slots=True)
class Decision:
    """An accepted command, decided and ready to append."""

    reply: bytes
    request: AppendRequest
    state: GameState


@dataclass
class CommandHandler:
    """decode → load → decide → append → reply, independent of the transport.

    ``cache`` holds the folded state of recently used games; it is only a cache: every load
    reads the events appended after the cached version, so a state written by another instance
    is never missed.
    """

    store: EventStore
    seeds: SeedVault
    clock: Callable[[], datetime] = utc_now
    cache_size: int = DEFAULT_MAX_GAMES
    cache: StateCache[GameState] = field(init=False)

    def __post_init__(self) -> None:
        self.cache = StateCache(self.cache_size)

    async def handle_bytes(self, body: bytes) -> bytes:
        """Answer one raw message; never raises for a bad message (it is answered rejected)."""
        return (await self.handle_batch([body]))[0]

    async def handle_batch(self, bodies: Sequence[bytes]) -> list[bytes]:
        """The encoded replies to raw messages, in their order; never raises.

        Each game's commands are taken in order, one per round; every round reads, appends
        and records for all its games together (see the module docstring).
        """
        replies = [b""] * len(bodies)
        queues: dict[str, list[tuple[int, bus.CommandEnvelope]]] = {}
        for index, body in enumerate(bodies):
            envelope = _decode(body)
            if isinstance(envelope, bytes):
                replies[index] = envelope
                continue
            problem = check_envelope(envelope)
            if problem is not None:
                with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
                    log.info("command_rejected", code=problem.code)
                replies[index] = bus.encoder.encode(problem)
                continue
            queues.setdefault(envelope.game_id, []).append((index, envelope))
        while queues:
            round_ = [queue.pop(0) for queue in queues.values()]
            queues = {game_id: queue for game_id, queue in queues.items() if queue}
            for index, reply in await self._round(round_):
                replies[index] = reply
        return replies

    async def handle(self, envelope: bus.CommandEnvelope) -> bytes:
        """The encoded reply to one envelope, one round trip at a time (the stored outcome for
        a retried command id). Creations, finishes and lost races take this path."""
        with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
            problem = check_envelope(envelope)
            if problem is not None:
                log.info("command_rejected", code=problem.code)
                return bus.encoder.encode(problem)
            try:
                outcome = await self.store.get_outcome(envelope.game_id, envelope.command_id)
                if outcome is None:
                    outcome = await self._decide_and_append(envelope)
                    state = self.cache.value(envelope.game_id)
                else:
                    log.info("command_duplicate")
                    outcome = answer_again(envelope, outcome)
                    state = await self.load(envelope.game_id)
            except Exception:
                # Retrying with the same command id is safe whatever happened before the error.
                log.exception("command_failed", command=type(envelope.command).__name__)
                return _internal_error(envelope)
        if state is not None and state.phase == "final_scoring":
            await self._finish(envelope)
        return outcome

    # -- one round of a batch: at most one command per game ----------------------------------

    async def _round(
        self, items: Sequence[tuple[int, bus.CommandEnvelope]]
    ) -> list[tuple[int, bytes]]:
        """Decide and append one command of each of several games, sharing the round trips."""
        answered: list[tuple[int, bytes]] = []
        alone: list[tuple[int, bus.CommandEnvelope]] = []  # for `handle`, after the round
        batched: list[tuple[int, bus.CommandEnvelope]] = []
        for index, envelope in items:
            needs_seed = isinstance(envelope.command, c.CreateGame | c.FinishGame)
            (alone if needs_seed else batched).append((index, envelope))
        try:
            states = await self.load_many([envelope.game_id for _, envelope in batched])
        except Exception:
            log.exception("load_failed", games=len(batched))
            answered += [(index, _internal_error(envelope)) for index, envelope in batched]
            batched, states = [], []

        decided: list[tuple[int, bus.CommandEnvelope, Decision]] = []
        refused: list[tuple[int, bus.CommandEnvelope, RuleError]] = []
        for (index, envelope), state in zip(batched, states, strict=True):
            try:
                decided.append((index, envelope, self._decide(envelope, state)))
            except RuleError as error:
                refused.append((index, envelope, error))
            except Exception:
                with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
                    log.exception("command_failed", command=type(envelope.command).__name__)
                answered.append((index, _internal_error(envelope)))

        try:
            results: Sequence[AppendResult] = await self.store.append_many(
                [decision.request for _, _, decision in decided]
            )
        except Exception:
            log.exception("append_failed", commands=len(decided))
            answered += [(index, _internal_error(envelope)) for index, envelope, _ in decided]
            decided, results = [], []
        for (index, envelope, decision), result in zip(decided, results, strict=True):
            if isinstance(result, Conflict):
                with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
                    log.info("append_conflict", expected=result.expected, actual=result.actual)
                alone.append((index, envelope))
            else:
                answered.append((index, self._settle(envelope, decision, result)))

        rejections = await asyncio.gather(
            *(self._reject(envelope, error) for _, envelope, error in refused),
            return_exceptions=True,
        )
        for (index, envelope, _), rejection in zip(refused, rejections, strict=True):
            if isinstance(rejection, BaseException):
                with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
                    log.error("command_failed", exc_info=rejection)
                answered.append((index, _internal_error(envelope)))
            else:
                answered.append((index, rejection))

        for index, envelope in alone:
            answered.append((index, await self.handle(envelope)))
        for _, envelope in batched:  # alone ones were finished by `handle`
            state = self.cache.value(envelope.game_id)
            if state is not None and state.phase == "final_scoring":
                await self._finish(envelope)
        return answered

    # -- deciding and appending --------------------------------------------------------------

    def _decide(
        self,
        envelope: bus.CommandEnvelope,
        state: GameState | None,
        command: c.Command | None = None,
    ) -> Decision:
        """Run the rules on ``state``; raises `RuleError` for an illegal command.
        ``command`` replaces the envelope's (the seed put into a creation or a finish)."""
        now = self.clock().isoformat()
        events, new_state = execute(
            state, command or envelope.command, command_id=envelope.command_id, time=now
        )
        expected = 0 if state is None else state.version
        reply = bus.Reply(
            status="accepted",
            game_id=envelope.game_id,
            command_id=envelope.command_id,
            version=expected + len(events),
            first_version=expected + 1,
            last_version=expected + len(events),
            command_digest=bus.command_digest(envelope.command),
        )
        encoded = bus.encoder.encode(reply)
        meta = BatchMeta(
            command_id=envelope.command_id,
            seat=envelope.seat,
            command=redacted(envelope.command),
            time=now,
        )
        request = AppendRequest(
            game_id=envelope.game_id,
            command_id=envelope.command_id,
            expected_version=expected,
            events=[e.encode(event) for event in events],
            outcome=encoded,
            batch_meta=_meta_encoder.encode(meta),
            # Appended only onto the very event this was decided on (never onto a history
            # that replaced it after lost writes), each event stored with its hash.
            prev_hash="" if state is None else state.last_hash,
            hashes=[event.hash for event in events],
        )
        return Decision(encoded, request, new_state)

    def _settle(
        self, envelope: bus.CommandEnvelope, decision: Decision, result: Appended | Duplicate
    ) -> bytes:
        """The reply once the append is done (a duplicate answers what was stored)."""
        kind = type(envelope.command).__name__
        if isinstance(result, Duplicate):
            with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
                log.info("command_duplicate", command=kind)
            return answer_again(envelope, result.outcome)
        self._remember(cached_state(decision.state))
        # DEBUG: the store records every accepted command with its provenance already, and a
        # log line per move costs more CPU than deciding it.
        log.debug(
            "command_accepted",
            game_id=envelope.game_id,
            command_id=envelope.command_id,
            seat=envelope.seat,
            command=kind,
            first_version=result.first_version,
            last_version=result.last_version,
        )
        return decision.reply

    async def _reject(self, envelope: bus.CommandEnvelope, error: RuleError) -> bytes:
        """Record and return the rejection (or what was stored first for this command id)."""
        encoded = bus.encoder.encode(rejected(envelope, error.code, error.message))
        duplicate = await self.store.record_outcome(envelope.game_id, envelope.command_id, encoded)
        with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
            log.info("command_rejected", command=type(envelope.command).__name__, code=error.code)
        return encoded if duplicate is None else answer_again(envelope, duplicate.outcome)

    async def _decide_and_append(self, envelope: bus.CommandEnvelope) -> bytes:
        """Decide on the latest state and append; on a conflict reload and decide again."""
        game_id = envelope.game_id
        kind = type(envelope.command).__name__
        for attempt in range(1, MAX_ATTEMPTS + 1):
            state = await self.load(game_id)
            try:
                command = await self._with_seed(envelope.command, state, game_id)
                decision = self._decide(envelope, state, command)
            except RuleError as error:
                return await self._reject(envelope, error)
            (result,) = await self.store.append_many([decision.request])
            if not isinstance(result, Conflict):
                return self._settle(envelope, decision, result)
            log.info(
                "append_conflict", expected=result.expected, actual=result.actual, attempt=attempt
            )
        log.warning("command_contended", command=kind, attempts=MAX_ATTEMPTS)
        return bus.encoder.encode(
            rejected(envelope, "contended", "The game is too busy right now; please retry.")
        )

    async def _with_seed(
        self, command: c.Command, state: GameState | None, game_id: str
    ) -> c.Command:
        """Put the secret seed into CreateGame/FinishGame; a client's seed is never used.

        CreateGame of an existing game gets a blank seed (it is rejected by the rules anyway),
        and an invalid creation is refused before a seed is generated, so no seed key is ever
        written for nothing.
        """
        if isinstance(command, c.CreateGame):
            if state is not None:
                return msgspec.structs.replace(command, seed="")
            # Validate with a stand-in first: no seed is stored for a creation the rules refuse.
            execute(None, msgspec.structs.replace(command, seed="stand-in"))
            secret = as_secret(await self.seeds.create(game_id))
            return msgspec.structs.replace(
                command, seed=secret.seed, salt=secret.salt, chosen_seed=secret.chosen
            )
        if isinstance(command, c.FinishGame):
            stored = await self.seeds.get(game_id) if state is not None else None
            found = as_secret(stored) if stored is not None else None
            return c.FinishGame(seed=found.seed, salt=found.salt) if found else c.FinishGame("")
        return command

    async def _finish(self, envelope: bus.CommandEnvelope) -> None:
        """Once nobody has dominoes left, reveal the seed: issue FinishGame as the system.

        Runs after any command that leaves the game waiting for the seed (also retries and
        rejections), so a game whose finish was interrupted by a crash is finished by the next
        command that reaches it. The derived command id makes the finish itself idempotent.
        The command's own reply is already decided and stays what was stored for it.
        """
        finish = bus.CommandEnvelope(
            game_id=envelope.game_id,
            command_id=envelope.command_id + FINISH_SUFFIX,
            command=c.FinishGame(seed=""),
            seat=None,
        )
        with bind_command(finish.game_id, finish.command_id, None):
            try:
                await self._decide_and_append(finish)
            except Exception:
                log.exception("finish_failed")

    # -- loading -----------------------------------------------------------------------------

    async def load(self, game_id: str) -> GameState | None:
        """The game's latest state: the cached fold plus the events appended after it, the
        cache checked against the stream (see `load_many`)."""
        return (await self.load_many([game_id]))[0]

    async def load_many(self, game_ids: Sequence[str]) -> list[GameState | None]:
        """The latest states of several (distinct) games, read in one round trip.

        Each read starts at the cached last event, which the stream must still hold (same
        version, same hash): a stream that is behind the cache or holds another history (writes
        lost to a power cut, then maybe refilled by other commands) drops the cached state and
        the game is replayed, so no command is decided, and no refusal stored, on lost events.
        """
        cached = [self.cache.get(game_id) for game_id in game_ids]
        pages = await self.store.read_many(
            [(game_id, read_from(entry)) for game_id, entry in zip(game_ids, cached, strict=True)]
        )
        states: list[GameState | None] = []
        for game_id, entry, page in zip(game_ids, cached, pages, strict=True):
            try:
                states.append(self._remember(checked_fold(entry, page, evolve)))
            except StaleCache as stale:
                log.warning("state_cache_stale", game_id=game_id, reason=str(stale))
                self.cache.drop(game_id)
                whole = await self.store.read(game_id)
                states.append(self._remember(fold_states(None, whole)))
        return states

    def _remember(self, entry: Cached[GameState] | None) -> GameState | None:
        """Cache a game's state, unless a newer one is cached (by a concurrent command)."""
        if entry is None:
            return None
        self.cache.remember(entry.value.game_id, entry)
        return entry.value


def _decode(body: bytes) -> bus.CommandEnvelope | bytes:
    """The envelope in a message, or the encoded rejection of a malformed one."""
    try:
        return bus.envelope_decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        ids = _ids_of(body)
        # msgspec names the offending path and type, never the value: safe to log.
        log.warning("malformed_envelope", error=str(error), **msgspec.structs.asdict(ids))
        reply = bus.Reply(
            status="rejected",
            game_id=ids.game_id,
            command_id=ids.command_id,
            code="malformed",
            message=f"The command could not be read: {error}",
        )
        return bus.encoder.encode(reply)


def _internal_error(envelope: bus.CommandEnvelope) -> bytes:
    if isinstance(sys.exc_info()[1], StoreUnavailableError | RedisConnectionError):
        # Redis unreachable (restarting, loading its data, a replica missing): a 503 with
        # Retry-After at the gateway, not a 500; retrying with the same command id is safe.
        reply = rejected(envelope, "store_unavailable", "The game store is unavailable; retry.")
        return bus.encoder.encode(reply)
    """Retrying with the same command id is safe whatever happened before the error."""
    reply = rejected(envelope, "internal_error", "The server failed; please retry.")
    return bus.encoder.encode(reply)


def _ids_of(body: bytes) -> _Ids:
    try:
        return msgspec.json.decode(body, type=_Ids)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _Ids()


EnvelopeBatch = Annotated[list[bytes], WithJsonSchema(bus.inline_schema(bus.CommandEnvelope))]
"""The handler gets the raw bytes of a batch of messages (decoded by msgspec). The docs show the
schema of one message: each stream entry is one envelope, however many are read at once."""


async def raw_bodies(message: StreamMessage[Any]) -> list[bytes]:
    """The bytes of every message of a batch, untouched (FastStream would parse JSON bodies)."""
    return [
        BinaryMessageFormatV1.parse(entry.get(DATA_KEY, b""))[0]
        for entry in message.raw_message["data"]
    ]


# -- the FastStream app ----------------------------------------------------------------------


@dataclass(repr=False)
class RulesService:
    """The broker, its two subscribers and the handler they call."""

    settings: Settings
    handler: CommandHandler | None = None
    broker: RedisBroker = field(init=False)
    app: FastStream = field(init=False)
    _redis: Redis | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        async def on_commands(bodies: EnvelopeBatch) -> None:
            """Handle a batch of command envelopes; each `Reply` goes to its ``reply_to``."""
            # Read from the context rather than injected with Context(): FastDepends resolves
            # an injected context value in a worker thread, a thread hop for every batch.
            await self.on_commands(bodies, self.broker.context.get_local("message"))

        self.broker = RedisBroker(
            self.settings.redis_url,
            logger=stdlib_logger("renature.rules.faststream"),
            log_level=logging.DEBUG,  # per-message lines; the handler logs each command
            # Its reads block (XREADGROUP BLOCK): no socket timeout may cut them (healing.py).
            **healing.BLOCKING_READ_OPTIONS,
        )
        self.broker.subscriber(
            stream=StreamSub(
                bus.COMMAND_STREAM,
                group=bus.RULES_GROUP,
                consumer=self.settings.consumer,
                batch=True,
                max_records=MAX_BATCH,
            ),
            ack_policy=AckPolicy.MANUAL,  # acknowledged with the replies, in one round trip
            no_reply=True,  # the replies are published by `on_commands`, not by FastStream
            decoder=raw_bodies,
            title="rules:commands",
            description=(
                "Command envelopes (msgspec JSON `CommandEnvelope`); each reply (msgspec JSON "
                "`Reply`) goes to the `reply_to` pub/sub channel of the message's headers, "
                "with its `correlation_id`."
            ),
        )(on_commands)
        # Takes over commands a dead instance read but never acknowledged.
        self.broker.subscriber(
            stream=StreamSub(
                bus.COMMAND_STREAM,
                group=bus.RULES_GROUP,
                consumer=self.settings.consumer,
                batch=True,
                min_idle_time=self.settings.reclaim_idle_ms,
                polling_interval=1000,
            ),
            ack_policy=AckPolicy.MANUAL,
            no_reply=True,
            decoder=raw_bodies,
            title="rules:commands:reclaim",
            include_in_schema=False,
        )(on_commands)
        # Self-healing (issue 11): back within a second of Redis returning, and a consumer
        # group lost with Redis's data is created again instead of stopping the service.
        healing.fast_reconnect()
        for subscriber in self.broker.subscribers:
            healing.heal_missing_group(subscriber, self._ensure_group)
        self.app = FastStream(
            self.broker,
            logger=stdlib_logger("renature.rules.app"),
            on_startup=[self.startup],
            on_shutdown=[self.shutdown],
            specification=AsyncAPI(
                self.broker,
                title="Renature rules service",
                version="0.1.0",
                description="Commands in, replies out; events go to the event store.",
            ),
        )

    async def on_commands(self, bodies: Sequence[bytes], message: StreamMessage[Any]) -> None:
        """Answer a batch: handle it, then publish every reply and acknowledge the batch in
        one pipeline. A failure before that leaves the batch pending, to be reclaimed."""
        if self.handler is None or self._redis is None:
            await self.startup()
        assert self.handler is not None
        assert self._redis is not None
        replies = await self.handler.handle_batch(bodies)
        headers = message.batch_headers or [message.headers] * len(bodies)
        pipe = self._redis.pipeline(transaction=False)
        for reply, header in zip(replies, headers, strict=True):
            if reply_to := header.get("reply_to"):
                wire = await BinaryMessageFormatV1.encode(
                    message=reply,
                    reply_to=None,
                    headers=None,
                    correlation_id=header.get("correlation_id") or "",
                )
                pipe.publish(reply_to, wire)
        pipe.xack(
            message.raw_message["channel"], bus.RULES_GROUP, *message.raw_message["message_ids"]
        )
        await pipe.execute()

    async def __aenter__(self) -> RulesService:
        """Run the service inside the current event loop (tests, embedding)."""
        await self.startup()
        await self.broker.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.broker.stop()
        await self.shutdown()

    async def startup(self) -> None:
        """Connect to Redis (replies go there) and the event store (unless a handler was
        injected, as in unit tests).

        The consumer group is created here from the *start* of the command stream, before the
        subscribers start (FastStream would create it at ``$``): commands published before any
        rules service ever ran are then handled rather than silently skipped.
        """
        if self._redis is not None:
            return
        self._redis = Redis.from_url(self.settings.redis_url)
        await healing.wait_for_redis(self._redis, "rules")  # started before Redis: wait
        if self.handler is not None:
            return
        await self._ensure_group()
        store = RedisEventStore(
            self._redis,
            prefix=self.settings.prefix,
            partitions=self.settings.partitions,
            durability=self.settings.durability,
            replicas=self.settings.durability_replicas,
        )
        self.handler = CommandHandler(
            store=store,
            seeds=RedisSeedVault(self._redis, store.layout),
            cache_size=self.settings.cache_games,
        )
        status = await store.check_durability()
        (log.info if status.ok else log.error)("durability", statement=status.statement)
        log.info("rules_service_started", consumer=self.settings.consumer)

    async def _ensure_group(self) -> None:
        """Create the rules consumer group (and the command stream) from the start, unless it
        exists: at start-up and whenever Redis answers NOGROUP (it came back empty)."""
        redis = self._redis or self.broker.config.connection.client
        if await healing.ensure_stream_group(redis, bus.COMMAND_STREAM, bus.RULES_GROUP):
            log.warning("consumer_group_created", group=bus.RULES_GROUP)

    async def shutdown(self) -> None:
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None


def create_service(settings: Settings | None = None) -> RulesService:
    """A rules service configured from ``settings`` (default: the environment)."""
    return RulesService(settings or Settings.from_env())


def run(settings: Settings) -> None:
    """Run the rules service until SIGINT/SIGTERM (FastStream handles the signals)."""
    import asyncio

    configure_logging(settings.log_level, service="rules")
    asyncio.run(create_service(settings).app.run())


# ``faststream docs gen renature_services.rules_service:app`` documents this app; nothing
# connects before ``app.run()``, so importing the module is side-effect free.
app = create_service().app
