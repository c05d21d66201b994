"""Commands in, replies out, independent of the transport: decode, load, decide, append, reply.

`CommandHandler` is the one-command path; `BatchRounds` answers a batch of messages in rounds
around it. The rules service (`gameserver.rules.rules_service`) feeds it from the bus; what
both paths do to one envelope (checks, the decision, the replies) is `gameserver.rules.envelopes`.

A batch costs at most three round trips to Redis whatever its size: one pipeline reads the
events of the batch's games that are not cached (and of those whose command the cached state
refuses), one runs the conditional append script once per accepted command, and one (the
service's) publishes the replies and acknowledges the batch. Where the store settles in its
appends (one Redis, `EventStore.settles_in_append`), an accepted command's append publishes its
reply and acknowledges its entry itself (`Settlement`, the service's `Settle`): a batch of
accepted commands of cached games is then one round trip. A command of a cached game is
decided on the cached state without a read: its append is conditional on the version and the
hash of the event it was decided on, so a state another instance moved on (or a stream that
lost writes) is a conflict, and the command is decided again on the stream's own state.
Commands of one game in one batch are taken in order, one per round. A command whose append
meets a conflict, and the rare commands that need the seed vault (creating and finishing a
game), go through the one-command path (`CommandHandler.handle`), which reloads and decides
again.

Correctness never depends on there being one instance: appends are conditional on the version
the command was decided on, so two instances racing on one game cannot fork it (the loser
reloads and decides again), and a command id is answered at most once (idempotency keys of the
event store).

Seeds: the service always generates the seed of a new game itself (``secrets.token_hex(32)``,
and a salt for its commitment: `gameserver.runtime.seed_vault`) and ignores any seed a client
sent, because whoever knows the seed knows every hand and the whole draw order. The seed lives
in a secret key in the game's hash slot and is only read back to issue ``FinishGame`` when the
last domino is gone; the ``GameEnded`` event then reveals it with its salt.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import datetime

import msgspec

from eventstore import (
    Appended,
    AppendRequest,
    AppendResult,
    Conflict,
    Duplicate,
    EventStore,
    Settlement,
)
from gameplatform import get_game
from gameplatform.interface import HostedGame, HostedState
from gameserver.rules.envelopes import (
    Decision,
    RuleRefusal,
    answer_again,
    check_envelope,
    decide_envelope,
    decode,
    internal_error,
    needs_seed,
    rejected,
    utc_now,
    wrong_game,
    wrong_sender,
)
from gameserver.rules.withdrawals import is_withdrawal, withdraw
from gameserver.runtime import bus
from gameserver.runtime.logging import bind_command, debugging, get_logger
from gameserver.runtime.seed_vault import SeedVault, as_secret
from gameserver.runtime.state_cache import (
    DEFAULT_MAX_GAMES,
    Cached,
    GameLoader,
    StateCache,
    cached_state,
    seat_name,
)

RULES_LOG = "renature.rules"
log = get_logger(RULES_LOG)

Loaded = HostedState | None
"""A game's state as loaded (None: the game has no events yet)."""

Entry = Cached[HostedState] | None
"""A game's cached state with its game and version (None: no events yet)."""

MAX_ATTEMPTS = 16
"""Decide/append rounds per command before giving up (each lost round means another command of
the same game was appended meanwhile, so this bounds only pathological contention)."""

FINISH_SUFFIX = ":finish"

Settle = Callable[[int, bytes], Awaitable[Settlement | None]]
"""The settlement of the message at a place in its batch, given its reply (None: the service
publishes that reply and acknowledges that message itself)."""


# long: an envelope's whole path (seed, decide, append, finish, load), each step typed
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
    cache: StateCache[HostedState] = field(init=False)

    def __post_init__(self) -> None:
        self.games = GameLoader(self.store, self.cache_size, log)
        self.cache = self.games.cache

    def bound(self, envelope: bus.CommandEnvelope) -> AbstractContextManager[None]:
        """`bind_command` for the envelope, with the seat's name where its game is cached."""
        name = seat_name(self.cache.get(envelope.game_id), envelope.seat)
        return bind_command(envelope.game_id, envelope.command_id, envelope.seat, name)

    async def handle_batch(self, bodies: Sequence[bytes], sender: str = bus.GATEWAY) -> list[bytes]:
        """The encoded replies to raw messages from ``sender`` (the stream they came on says
        who), in their order; never raises (`BatchRounds`)."""
        return await BatchRounds(self, sender).answer(bodies)

    async def handle(self, envelope: bus.CommandEnvelope) -> bytes:
        """The encoded reply to one envelope, one round trip at a time (the stored outcome for
        a retried command id). Creations, finishes and lost races take this path."""
        with self.bound(envelope):
            problem = check_envelope(envelope)
            if problem is not None:
                log.info("command_rejected", code=problem.code)
                return bus.encoder.encode(problem)
            try:
                if is_withdrawal(envelope):
                    return await withdraw(self, envelope)
                outcome = await self.store.get_outcome(envelope.game_id, envelope.command_id)
                if outcome is None:
                    outcome = await self.decide_and_append(envelope)
                    state = self.cache.get(envelope.game_id)
                else:
                    log.info("command_duplicate")
                    outcome = answer_again(envelope, outcome)
                    state = await self.games.load_entry(envelope.game_id)
            except Exception:
                # Retrying with the same command id is safe whatever happened before the error.
                log.exception("command_failed", command=type(envelope.command).__name__)
                return internal_error(envelope)
        await self.finish_if_due(envelope, state)
        return outcome

    # -- deciding and appending --------------------------------------------------------------

    def decide(
        self, envelope: bus.CommandEnvelope, state: Loaded, command: msgspec.Struct | None = None
    ) -> Decision:
        """Run the rules on ``state`` now (`decide_envelope`); raises `RuleRefusal` for an
        illegal command. ``command`` replaces the envelope's (the seed put into a creation or
        a finish)."""
        return decide_envelope(envelope, state, command, self.clock().isoformat())

    def settle(
        self, envelope: bus.CommandEnvelope, decision: Decision, result: Appended | Duplicate
    ) -> bytes:
        """The reply once the append is done (a duplicate answers what was stored)."""
        kind = type(envelope.command).__name__
        if isinstance(result, Duplicate):
            with self.bound(envelope):
                log.info("command_duplicate", command=kind)
            return answer_again(envelope, result.outcome)
        self.games.remember(cached_state(decision.state, envelope.game))
        # DEBUG: the store records every accepted command with its provenance already, and a
        # log line per move costs more CPU than deciding it.
        if not debugging(RULES_LOG):
            return decision.reply
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

    async def reject(self, envelope: bus.CommandEnvelope, error: RuleRefusal) -> bytes:
        """Record and return the rejection (or what was stored first for this command id).

        A retried command (a keyed join sent again) is refused by the rules on the state its
        first try made (the seat is its own now), but what it gets is the stored outcome: that
        is logged as ``command_replayed`` with the stored status, not as a rejection."""
        encoded = bus.encoder.encode(rejected(envelope, error.code, error.message))
        outcomes = self.refusals or self.store
        duplicate = await outcomes.record_outcome(envelope.game_id, envelope.command_id, encoded)
        kind = type(envelope.command).__name__
        with self.bound(envelope):
            if duplicate is None:
                log.info("command_rejected", command=kind, code=error.code)
                return encoded
            answer = answer_again(envelope, duplicate.outcome)
            stored = bus.reply_decoder.decode(answer)
            log.info("command_replayed", command=kind, status=stored.status, code=stored.code)
        return answer

    async def decide_and_append(self, envelope: bus.CommandEnvelope) -> bytes:
        """Decide on the latest state and append; on a conflict reload and decide again."""
        game_id = envelope.game_id
        kind = type(envelope.command).__name__
        for attempt in range(1, MAX_ATTEMPTS + 1):
            entry = await self.games.load_entry(game_id)
            if (mismatch := wrong_game(envelope, entry)) is not None:
                return bus.encoder.encode(mismatch)  # nothing to record: no rule was asked
            state = None if entry is None else entry.value
            try:
                command = await self._with_seed(envelope, state)
                decision = self.decide(envelope, state, command)
            except RuleRefusal as error:
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

    async def _with_seed(self, envelope: bus.CommandEnvelope, state: Loaded) -> msgspec.Struct:
        """Put the seed into a creation or a finish (`Game.needs_seed`).

        A game whose seed deals secrets (`Game.seed_secret`: Renature) takes it from the seed
        vault, never from a client. A creation of an existing game gets a blank seed (it is
        rejected by the rules anyway), and an invalid creation is refused before a seed is
        generated, so no seed key is ever written for nothing. A game with a public seed
        (Renaissance) keeps a client's seed and draws one where none was sent.
        """
        game, command, game_id = get_game(envelope.game), envelope.command, envelope.game_id
        if not game.needs_seed(command):
            return command
        if not game.seed_secret:
            return game.with_seed(command, secrets.token_hex(16))
        if game.is_creation(command):
            if state is not None:
                return game.with_seed(command, "")
            # Validate with a stand-in first: no seed is stored for a creation the rules refuse.
            self.decide(envelope, None, game.with_seed(command, "stand-in"))
            secret = as_secret(await self.seeds.create(game_id))
            return game.with_seed(command, secret.seed, secret.salt, secret.chosen)
        stored = await self.seeds.get(game_id) if state is not None else None
        found = as_secret(stored) if stored is not None else None
        return (
            game.with_seed(command, found.seed, found.salt)
            if found
            else game.with_seed(command, "")
        )

    async def finish_if_due(self, envelope: bus.CommandEnvelope, entry: Entry) -> None:
        """Once nobody has dominoes left (``state`` awaits the final scoring), reveal the seed:
        issue FinishGame as the system.

        Runs after any command that leaves the game waiting for the seed (also retries and
        rejections), so a game whose finish was interrupted by a crash is finished by the next
        command that reaches it. The derived command id makes the finish itself idempotent.
        The command's own reply is already decided and stays what was stored for it.
        """
        if entry is None:
            return
        command = owed_finish(entry.adapter, entry.value)
        if command is None:
            return
        finish = bus.CommandEnvelope(
            game_id=envelope.game_id,
            command_id=envelope.command_id + FINISH_SUFFIX,
            command=command,
            seat=None,
            game=entry.game,
        )
        with bind_command(finish.game_id, finish.command_id, None):
            try:
                await self.decide_and_append(finish)
            except Exception:
                log.exception("finish_failed")

    # -- loading -----------------------------------------------------------------------------

    async def load(self, game_id: str) -> Loaded:
        """The game's latest state, checked against the stream's lineage (`GameLoader`): no
        command is decided, and no refusal stored, on events the stream lost."""
        return await self.games.load(game_id)

    async def load_many(self, game_ids: Sequence[str]) -> list[Entry]:
        """The latest states of several (distinct) games, with their games, in one round trip."""
        return await self.games.load_many(game_ids)


def owed_finish(game: HostedGame, state: HostedState) -> msgspec.Struct | None:
    """The command the service owes a game in ``state`` (its finish, `finish_if_due`), its
    seed still blank; None when it owes none."""
    command: msgspec.Struct | None = game.finishing_command(state, "")
    return command


Indexed = tuple[int, bus.CommandEnvelope]
"""An envelope with its place in the batch (replies go back in the batch's order)."""


class BatchRounds:
    """One batch of raw messages, answered in rounds around a `CommandHandler`.

    Each game's commands are taken in order, one per round; every round reads, appends and
    records for all its games together (see the module docstring). Creations, finishes and
    commands that lost an append race go through the one-command path, `CommandHandler.handle`.
    """

    def __init__(
        self, handler: CommandHandler, sender: str = bus.GATEWAY, settle: Settle | None = None
    ) -> None:
        self.handler = handler
        self.sender = sender
        self.settle = settle if handler.store.settles_in_append else None
        self.answered: list[tuple[int, bytes]] = []
        self.settled: set[int] = set()
        """The places of the messages whose appends published their replies and acknowledged
        them (`Settle`)."""
        self.replayed: set[str] = set()
        """The games of the batch's commands whose appends met their own earlier append."""

    async def answer(self, bodies: Sequence[bytes]) -> list[bytes]:
        """The encoded replies, in the order of ``bodies``; never raises."""
        replies = [b""] * len(bodies)
        queues: dict[str, list[Indexed]] = {}
        for index, body in enumerate(bodies):
            envelope = decode(body)
            if isinstance(envelope, bytes):
                replies[index] = envelope
                continue
            problem = check_envelope(envelope) or wrong_sender(envelope, self.sender)
            if problem is not None:
                with self.handler.bound(envelope):
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
        alone = [item for item in items if needs_seed(item[1])]  # for `handle`, after
        batched = [item for item in items if not needs_seed(item[1])]
        warm = [item for item in batched if item[1].game_id in self.handler.cache]
        cold = [item for item in batched if item[1].game_id not in self.handler.cache]
        cache = self.handler.cache
        decided, doubted = self._decide(warm, [cache.get(env.game_id) for _, env in warm])
        # A refusal on the cached state is decided again on the stream's own (another
        # instance may have moved the game on); an acceptance needs no read: its append is
        # conditional on the very event it was decided on, and a conflict reloads it.
        cold, states = await self._load(cold + [item for item, _ in doubted])
        decided_cold, refused = self._decide(cold, states)
        alone += await self._append(decided + decided_cold)
        await self._reject(refused)
        for index, envelope in alone:
            self.answered.append((index, await self.handler.handle(envelope)))
        for _, envelope in batched:  # alone ones were finished by `handle`
            await self.handler.finish_if_due(envelope, await self._latest(envelope.game_id))
        return self.answered

    async def _latest(self, game_id: str) -> Entry:
        """The state a game's finish is judged on: the cached one, read again where a command
        met its own earlier append (that append, maybe another instance's, may be missing from
        the cache, and a game whose finish it owed would wait for it forever), as
        `CommandHandler.handle` does."""
        if game_id not in self.replayed:
            return self.handler.cache.get(game_id)
        try:
            return await self.handler.games.load_entry(game_id)
        except Exception:
            log.exception("load_failed", games=1)
            return self.handler.cache.get(game_id)

    async def _load(self, batched: list[Indexed]) -> tuple[list[Indexed], list[Entry]]:
        """The games' states in one read (none for no game); on a failure every command is an
        internal error."""
        if not batched:
            return [], []
        try:
            return batched, await self.handler.load_many([env.game_id for _, env in batched])
        except Exception:
            log.exception("load_failed", games=len(batched))
            self.answered += [(index, internal_error(env)) for index, env in batched]
            return [], []

    def _decide(
        self, batched: list[Indexed], states: list[Entry]
    ) -> tuple[list[tuple[int, bus.CommandEnvelope, Decision]], list[tuple[Indexed, RuleRefusal]]]:
        """Each command decided on its game's state: accepted ones and refused ones."""
        decided: list[tuple[int, bus.CommandEnvelope, Decision]] = []
        refused: list[tuple[Indexed, RuleRefusal]] = []
        for (index, envelope), entry in zip(batched, states, strict=True):
            if (mismatch := wrong_game(envelope, entry)) is not None:
                self.answered.append((index, bus.encoder.encode(mismatch)))
                continue
            state = None if entry is None else entry.value
            try:
                decided.append((index, envelope, self.handler.decide(envelope, state)))
            except RuleRefusal as error:
                refused.append(((index, envelope), error))
            except Exception:
                with self.handler.bound(envelope):
                    log.exception("command_failed", command=type(envelope.command).__name__)
                self.answered.append((index, internal_error(envelope)))
        return decided, refused

    async def _append(
        self, decided: list[tuple[int, bus.CommandEnvelope, Decision]]
    ) -> list[Indexed]:
        """Append every accepted command in one round trip; those that met a conflict are
        returned, to be decided again alone."""
        requests = [await self._settling(*item) for item in decided]
        try:
            results: Sequence[AppendResult] = await self.handler.store.append_many(requests)
        except Exception:
            log.exception("append_failed", commands=len(decided))
            self.answered += [(index, internal_error(env)) for index, env, _ in decided]
            return []
        conflicts: list[Indexed] = []
        for (index, envelope, decision), result, request in zip(
            decided, results, requests, strict=True
        ):
            if isinstance(result, Conflict):
                with self.handler.bound(envelope):
                    log.info("append_conflict", expected=result.expected, actual=result.actual)
                conflicts.append((index, envelope))
                continue
            if isinstance(result, Appended) and request.settlement is not None:
                self.settled.add(index)
            if isinstance(result, Duplicate):
                self.replayed.add(envelope.game_id)
            self.answered.append((index, self.handler.settle(envelope, decision, result)))
        return conflicts

    async def _settling(
        self, index: int, envelope: bus.CommandEnvelope, decision: Decision
    ) -> AppendRequest:
        """The decision's append request, settling its message where the service can. A
        command after which the service owes its game a command of its own (the finish) is
        answered once that one is appended too, as on the one-command path."""
        if self.settle is None or owed_finish(get_game(envelope.game), decision.state):
            return decision.request
        settlement = await self.settle(index, decision.reply)
        if settlement is None:
            return decision.request
        return replace(decision.request, settlement=settlement)

    async def _reject(self, refused: list[tuple[Indexed, RuleRefusal]]) -> None:
        """Record every refusal, concurrently."""
        rejections = await asyncio.gather(
            *(self.handler.reject(envelope, error) for (_, envelope), error in refused),
            return_exceptions=True,
        )
        for ((index, envelope), _), rejection in zip(refused, rejections, strict=True):
            if isinstance(rejection, BaseException):
                with self.handler.bound(envelope):
                    log.error("command_failed", exc_info=rejection)
                self.answered.append((index, internal_error(envelope)))
            else:
                self.answered.append((index, rejection))
