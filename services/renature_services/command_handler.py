"""Commands in, replies out, independent of the transport: decode, load, decide, append, reply.

`CommandHandler` is the one-command path; `BatchRounds` answers a batch of messages in rounds
around it. The rules service (`renature_services.rules_service`) feeds it from the bus.

A batch costs three round trips to Redis whatever its size: one pipeline reads what other
instances appended to the batch's games since the cached states, one runs the conditional
append script once per accepted command, and one (the service's) publishes the replies and
acknowledges the batch. Commands of one game in one batch are taken in order, one per round. A
command whose append meets a conflict, and the rare commands that need the seed vault
(creating and finishing a game), go through the one-command path (`CommandHandler.handle`),
which reloads and decides again.

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
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import msgspec
from redis.exceptions import ConnectionError as RedisConnectionError

from renature import commands as c
from renature import events as e
from renature.errors import RuleError
from renature.rules import execute
from renature.state import GameState
from renature_services import bus
from renature_services.logging import bind_command, get_logger
from renature_services.seed_vault import SeedVault, as_secret
from renature_services.state_cache import (
    DEFAULT_MAX_GAMES,
    GameLoader,
    StateCache,
    cached_state,
)
from renature_store import (
    Appended,
    AppendRequest,
    AppendResult,
    Conflict,
    Duplicate,
    EventStore,
    StoreUnavailableError,
)
from renature_store.keys import check_game_id

log = get_logger("renature.rules")

MAX_ATTEMPTS = 16
"""Decide/append rounds per command before giving up (each lost round means another command of
the same game was appended meanwhile, so this bounds only pathological contention)."""

FINISH_SUFFIX = ":finish"


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


def decide_envelope(
    envelope: bus.CommandEnvelope, state: GameState | None, command: c.Command | None, now: str
) -> Decision:
    """The envelope's command decided on ``state`` at ``now``: its reply, the append request
    (events, outcome, provenance, the hash chain it continues) and the state after it."""
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
        command=e.public_command(envelope.command),
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
    refusals: EventStore | None = None
    """Where refused commands' outcomes are recorded (a store with a TTL of minutes: the
    retention policy); ``store`` itself when None."""
    games: GameLoader = field(init=False)
    cache: StateCache[GameState] = field(init=False)

    def __post_init__(self) -> None:
        self.games = GameLoader(self.store, self.cache_size, log)
        self.cache = self.games.cache

    async def handle_batch(self, bodies: Sequence[bytes]) -> list[bytes]:
        """The encoded replies to raw messages, in their order; never raises (`BatchRounds`)."""
        return await BatchRounds(self).answer(bodies)

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
                    outcome = await self.decide_and_append(envelope)
                    state = self.cache.value(envelope.game_id)
                else:
                    log.info("command_duplicate")
                    outcome = answer_again(envelope, outcome)
                    state = await self.load(envelope.game_id)
            except Exception:
                # Retrying with the same command id is safe whatever happened before the error.
                log.exception("command_failed", command=type(envelope.command).__name__)
                return _internal_error(envelope)
        await self.finish_if_due(envelope, state)
        return outcome

    # -- deciding and appending --------------------------------------------------------------

    def decide(
        self,
        envelope: bus.CommandEnvelope,
        state: GameState | None,
        command: c.Command | None = None,
    ) -> Decision:
        """Run the rules on ``state`` now (`decide_envelope`); raises `RuleError` for an
        illegal command. ``command`` replaces the envelope's (the seed put into a creation or
        a finish)."""
        return decide_envelope(envelope, state, command, self.clock().isoformat())

    def settle(
        self, envelope: bus.CommandEnvelope, decision: Decision, result: Appended | Duplicate
    ) -> bytes:
        """The reply once the append is done (a duplicate answers what was stored)."""
        kind = type(envelope.command).__name__
        if isinstance(result, Duplicate):
            with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
                log.info("command_duplicate", command=kind)
            return answer_again(envelope, result.outcome)
        self.games.remember(cached_state(decision.state))
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

    async def reject(self, envelope: bus.CommandEnvelope, error: RuleError) -> bytes:
        """Record and return the rejection (or what was stored first for this command id)."""
        encoded = bus.encoder.encode(rejected(envelope, error.code, error.message))
        outcomes = self.refusals or self.store
        duplicate = await outcomes.record_outcome(envelope.game_id, envelope.command_id, encoded)
        with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
            log.info("command_rejected", command=type(envelope.command).__name__, code=error.code)
        return encoded if duplicate is None else answer_again(envelope, duplicate.outcome)

    async def decide_and_append(self, envelope: bus.CommandEnvelope) -> bytes:
        """Decide on the latest state and append; on a conflict reload and decide again."""
        game_id = envelope.game_id
        kind = type(envelope.command).__name__
        for attempt in range(1, MAX_ATTEMPTS + 1):
            state = await self.load(game_id)
            try:
                command = await self._with_seed(envelope.command, state, game_id)
                decision = self.decide(envelope, state, command)
            except RuleError as error:
                return await self.reject(envelope, error)
            (result,) = await self.store.append_many([decision.request])
            if not isinstance(result, Conflict):
                return self.settle(envelope, decision, result)
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

    async def finish_if_due(self, envelope: bus.CommandEnvelope, state: GameState | None) -> None:
        """Once nobody has dominoes left (``state`` awaits the final scoring), reveal the seed:
        issue FinishGame as the system.

        Runs after any command that leaves the game waiting for the seed (also retries and
        rejections), so a game whose finish was interrupted by a crash is finished by the next
        command that reaches it. The derived command id makes the finish itself idempotent.
        The command's own reply is already decided and stays what was stored for it.
        """
        if state is None or state.phase != "final_scoring":
            return
        finish = bus.CommandEnvelope(
            game_id=envelope.game_id,
            command_id=envelope.command_id + FINISH_SUFFIX,
            command=c.FinishGame(seed=""),
            seat=None,
        )
        with bind_command(finish.game_id, finish.command_id, None):
            try:
                await self.decide_and_append(finish)
            except Exception:
                log.exception("finish_failed")

    # -- loading -----------------------------------------------------------------------------

    async def load(self, game_id: str) -> GameState | None:
        """The game's latest state, checked against the stream's lineage (`GameLoader`): no
        command is decided, and no refusal stored, on events the stream lost."""
        return await self.games.load(game_id)

    async def load_many(self, game_ids: Sequence[str]) -> list[GameState | None]:
        """The latest states of several (distinct) games, read in one round trip."""
        return await self.games.load_many(game_ids)


Indexed = tuple[int, bus.CommandEnvelope]
"""An envelope with its place in the batch (replies go back in the batch's order)."""


class BatchRounds:
    """One batch of raw messages, answered in rounds around a `CommandHandler`.

    Each game's commands are taken in order, one per round; every round reads, appends and
    records for all its games together (see the module docstring). Creations, finishes and
    commands that lost an append race go through the one-command path, `CommandHandler.handle`.
    """

    def __init__(self, handler: CommandHandler) -> None:
        self.handler = handler
        self.answered: list[tuple[int, bytes]] = []

    async def answer(self, bodies: Sequence[bytes]) -> list[bytes]:
        """The encoded replies, in the order of ``bodies``; never raises."""
        replies = [b""] * len(bodies)
        queues: dict[str, list[Indexed]] = {}
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
            for index, reply in await self.round(round_):
                replies[index] = reply
        return replies

    async def round(self, items: Sequence[Indexed]) -> list[tuple[int, bytes]]:
        """Decide and append one command of each of several games, sharing the round trips."""
        self.answered = []
        alone = [item for item in items if _needs_seed(item[1])]  # for `handle`, after
        batched = [item for item in items if not _needs_seed(item[1])]
        batched, states = await self._load(batched)
        decided, refused = self._decide(batched, states)
        alone += await self._append(decided)
        await self._reject(refused)
        for index, envelope in alone:
            self.answered.append((index, await self.handler.handle(envelope)))
        for _, envelope in batched:  # alone ones were finished by `handle`
            await self.handler.finish_if_due(envelope, self.handler.cache.value(envelope.game_id))
        return self.answered

    async def _load(self, batched: list[Indexed]) -> tuple[list[Indexed], list[GameState | None]]:
        """The games' states in one read; on a failure every command is an internal error."""
        try:
            return batched, await self.handler.load_many([env.game_id for _, env in batched])
        except Exception:
            log.exception("load_failed", games=len(batched))
            self.answered += [(index, _internal_error(env)) for index, env in batched]
            return [], []

    def _decide(
        self, batched: list[Indexed], states: list[GameState | None]
    ) -> tuple[list[tuple[int, bus.CommandEnvelope, Decision]], list[tuple[Indexed, RuleError]]]:
        """Each command decided on its game's state: accepted ones and refused ones."""
        decided: list[tuple[int, bus.CommandEnvelope, Decision]] = []
        refused: list[tuple[Indexed, RuleError]] = []
        for (index, envelope), state in zip(batched, states, strict=True):
            try:
                decided.append((index, envelope, self.handler.decide(envelope, state)))
            except RuleError as error:
                refused.append(((index, envelope), error))
            except Exception:
                with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
                    log.exception("command_failed", command=type(envelope.command).__name__)
                self.answered.append((index, _internal_error(envelope)))
        return decided, refused

    async def _append(
        self, decided: list[tuple[int, bus.CommandEnvelope, Decision]]
    ) -> list[Indexed]:
        """Append every accepted command in one round trip; those that met a conflict are
        returned, to be decided again alone."""
        try:
            results: Sequence[AppendResult] = await self.handler.store.append_many(
                [decision.request for _, _, decision in decided]
            )
        except Exception:
            log.exception("append_failed", commands=len(decided))
            self.answered += [(index, _internal_error(env)) for index, env, _ in decided]
            return []
        conflicts: list[Indexed] = []
        for (index, envelope, decision), result in zip(decided, results, strict=True):
            if isinstance(result, Conflict):
                with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
                    log.info("append_conflict", expected=result.expected, actual=result.actual)
                conflicts.append((index, envelope))
            else:
                self.answered.append((index, self.handler.settle(envelope, decision, result)))
        return conflicts

    async def _reject(self, refused: list[tuple[Indexed, RuleError]]) -> None:
        """Record every refusal, concurrently."""
        rejections = await asyncio.gather(
            *(self.handler.reject(envelope, error) for (_, envelope), error in refused),
            return_exceptions=True,
        )
        for ((index, envelope), _), rejection in zip(refused, rejections, strict=True):
            if isinstance(rejection, BaseException):
                with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
                    log.error("command_failed", exc_info=rejection)
                self.answered.append((index, _internal_error(envelope)))
            else:
                self.answered.append((index, rejection))


def _needs_seed(envelope: bus.CommandEnvelope) -> bool:
    """Creations and finishes read the seed vault: they take the one-command path."""
    return isinstance(envelope.command, c.CreateGame | c.FinishGame)


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
    """Retrying with the same command id is safe whatever happened before the error."""
    if isinstance(sys.exc_info()[1], StoreUnavailableError | RedisConnectionError):
        # Redis unreachable (restarting, loading its data, a replica missing): a 503 with
        # Retry-After at the gateway, not a 500; retrying with the same command id is safe.
        reply = rejected(envelope, "store_unavailable", "The game store is unavailable; retry.")
        return bus.encoder.encode(reply)
    reply = rejected(envelope, "internal_error", "The server failed; please retry.")
    return bus.encoder.encode(reply)


def _ids_of(body: bytes) -> _Ids:
    try:
        return msgspec.json.decode(body, type=_Ids)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _Ids()
