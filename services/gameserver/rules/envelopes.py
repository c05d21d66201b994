"""A command envelope on the rules service's two paths alike: its checks before the store is
touched, its command decided into a reply and an append request (with the batch's provenance),
and the replies of refusals, retries and failures."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import UTC, datetime

import msgspec
from redis.exceptions import ConnectionError as RedisConnectionError

from eventstore import (
    AppendRequest,
    StoreUnavailableError,
)
from eventstore.keys import check_game_id
from gameplatform import get_game
from gameplatform.interface import HostedState
from gameserver.rules.withdrawals import check_withdrawal, is_withdrawal
from gameserver.runtime import bus
from gameserver.runtime.logging import bind_command, get_logger
from gameserver.runtime.state_cache import (
    Cached,
)

log = get_logger("renature.rules")


class BatchMeta(msgspec.Struct, frozen=True):
    """Provenance stored with the first event of each appended batch (seeds redacted).

    ``game`` is written for every game but Renature (whose metas stay as they always were):
    the meta of a stream's first event names the stream's game for every reader
    (`gameserver.runtime.state_cache.StreamGame`)."""

    command_id: str
    seat: int | None
    command: msgspec.Raw
    time: str
    game: str | msgspec.UnsetType = msgspec.UNSET


class RuleRefusal(Exception):
    """A game's rule error, whatever the game: its ``code`` and a player's ``message``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Ids(msgspec.Struct):
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
    if is_withdrawal(envelope):
        return check_withdrawal(envelope)
    command = envelope.command
    game = get_game(envelope.game)
    if game.is_creation(command) and getattr(command, "game_id", None) != envelope.game_id:
        return rejected(envelope, "invalid_command", "The game id of CreateGame must match.")
    if envelope.seat is None and game.needs_seat(command):
        # Only a gateway that resolved a seat token may send a seat's move: an envelope put
        # on the command stream without a seat would act for any seat.
        return rejected(envelope, "seat_required", "A seat's command must name its sender's seat.")
    seat = getattr(command, "seat", None)
    if envelope.seat is not None and seat is not None and seat != envelope.seat:
        return rejected(
            envelope, "not_your_seat", f"You play seat {envelope.seat}, not seat {seat}."
        )
    return None


def wrong_sender(envelope: bus.CommandEnvelope, sender: str) -> bus.Reply | None:
    """The refusal of a command its sender may not send (`Game.sender_of`): a forged envelope
    is answered, logged and stored nowhere (None when the sender may send it)."""
    command = envelope.command
    allowed = bus.GATEWAY if is_withdrawal(envelope) else get_game(envelope.game).sender_of(command)
    if allowed == sender:
        return None
    kind = type(envelope.command).__name__
    with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
        log.warning("command_from_wrong_sender", command=kind, sender=sender, allowed=allowed)
    return rejected(envelope, "wrong_sender", f"Only the {allowed} sends {kind}, not the {sender}.")


def wrong_game(
    envelope: bus.CommandEnvelope, entry: Cached[HostedState] | None
) -> bus.Reply | None:
    """The refusal of a command of one game sent to a game of another (None when it fits)."""
    if entry is None or entry.game == envelope.game:
        return None
    return rejected(
        envelope,
        "wrong_game",
        f"Game {envelope.game_id!r} is a {entry.game} game; this is a {envelope.game} command.",
    )


@dataclass(frozen=True, slots=True)
class Decision:
    """An accepted command, decided and ready to append."""

    reply: bytes
    request: AppendRequest
    state: HostedState


def decide_envelope(
    envelope: bus.CommandEnvelope,
    state: HostedState | None,
    command: msgspec.Struct | None,
    now: str,
) -> Decision:
    """The envelope's command decided on ``state`` at ``now`` by the envelope's game: its reply,
    the append request (events, outcome, provenance, the hash chain it continues) and the
    state after it. Raises `RuleRefusal` for a command the rules refuse."""
    game = get_game(envelope.game)
    try:
        events, new_state = game.execute(
            state, command or envelope.command, command_id=envelope.command_id, time=now
        )
    except Exception as error:
        if game.is_rule_error(error):
            code, message = getattr(error, "code", "rule_broken"), getattr(error, "message", "")
            raise RuleRefusal(code, message or str(error)) from error
        raise
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
        command=msgspec.Raw(bus.encoder.encode(game.public_command(envelope.command))),
        time=now,
        game=msgspec.UNSET if envelope.game == bus.DEFAULT_GAME else envelope.game,
    )
    request = AppendRequest(
        game_id=envelope.game_id,
        command_id=envelope.command_id,
        expected_version=expected,
        events=[game.encode_event(event) for event in events],
        outcome=encoded,
        batch_meta=_meta_encoder.encode(meta),
        # Appended only onto the very event this was decided on (never onto a history
        # that replaced it after lost writes), each event stored with its hash.
        prev_hash="" if state is None else state.last_hash,
        hashes=[event.hash for event in events],
    )
    return Decision(encoded, request, new_state)


def needs_seed(envelope: bus.CommandEnvelope) -> bool:
    """Creations and finishes (which may read the seed vault) take the one-command path, and
    so do withdrawn joins (`gameserver.rules.withdrawals`)."""
    if is_withdrawal(envelope):
        return True
    game = get_game(envelope.game)
    return game.is_creation(envelope.command) or game.needs_seed(envelope.command)


def decode(body: bytes) -> bus.CommandEnvelope | bytes:
    """The envelope in a message, or the encoded rejection of a malformed one."""
    try:
        return bus.decode_envelope(body)
    except (msgspec.DecodeError, msgspec.ValidationError, bus.UnknownGameError) as error:
        ids = ids_of(body)
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


def internal_error(envelope: bus.CommandEnvelope) -> bytes:
    """Retrying with the same command id is safe whatever happened before the error."""
    if isinstance(sys.exc_info()[1], StoreUnavailableError | RedisConnectionError):
        # Redis unreachable (restarting, loading its data, a replica missing): a 503 with
        # Retry-After at the gateway, not a 500; retrying with the same command id is safe.
        reply = rejected(envelope, "store_unavailable", "The game store is unavailable; retry.")
        return bus.encoder.encode(reply)
    reply = rejected(envelope, "internal_error", "The server failed; please retry.")
    return bus.encoder.encode(reply)


def ids_of(body: bytes) -> Ids:
    try:
        return msgspec.json.decode(body, type=Ids)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return Ids()
