"""The message contract between the services. Everything on the bus is msgspec JSON.

- Commands go to the command stream of their game's partition (``COMMAND_PARTITIONS``) as a
  ``CommandEnvelope``; the rules service consumes those streams with the consumer group
  ``RULES_GROUP`` and answers every envelope with a ``Reply`` (FastStream request/reply: the
  gateway awaits the reply of the message it published) on the reply channel the message
  names: ``PUBLISH`` to a plain channel, ``SPUBLISH`` to a shard channel (`reply_channel`).
- Events go to the event store (``eventstore``): one stream per game plus partition feeds,
  which the projectors consume with their own consumer groups.
- Read models are Redis hashes written by the projectors (see ``gameserver.projectors``).
"""

from __future__ import annotations

import hashlib
import struct
from functools import cache
from typing import Literal

import msgspec

from eventstore import CommandPartitions
from gameplatform import game_names, get_game, registry
from gameplatform.forms import inline_schema
from gameplatform.interface import JsonValue

COMMAND_PARTITIONS = CommandPartitions()
"""The command streams under the default layout and count (``rn:{p00}:commands`` ..
``rn:{p03}:commands``); services configured otherwise use ``Settings.commands``."""
RULES_GROUP = "rules"
BOARD_GROUP = "board-projector"
SCORE_GROUP = "score-projector"
MODELS_GROUP = "models-projector"
"""The board and score projections folded together (`renature serve models`)."""


REPLY_CHANNELS = "rn:reply:"
"""Every reply channel's name begins so (the ACL of infra/redis/users.acl grants them)."""
SHARD_REPLY_CHANNELS = f"{REPLY_CHANNELS}shard:"
"""A reply channel named so is a shard channel (Redis 7 sharded pub/sub): its replies go out
with ``SPUBLISH``, which a Redis Cluster delivers within the shard of the channel's slot only,
where a ``PUBLISH`` is broadcast to every node of the cluster. Its subscriber (a `RulesClient`
on a cluster) subscribes it with ``SSUBSCRIBE``; any other reply channel gets ``PUBLISH``."""


def reply_channel(unique: str, *, sharded: bool) -> str:
    """The name of a reply channel (``unique``: a fresh random string)."""
    return f"{SHARD_REPLY_CHANNELS if sharded else REPLY_CHANNELS}{unique}"


def is_shard_channel(channel: str | bytes) -> bool:
    """Whether replies to ``channel`` go out by ``SPUBLISH`` (see `SHARD_REPLY_CHANNELS`)."""
    name = channel.decode() if isinstance(channel, bytes) else channel
    return name.startswith(SHARD_REPLY_CHANNELS)


_BINARY = b"\x89BIN\r\n\x1a\n\x00\x01"
"""FastStream's binary message format (`BinaryMessageFormatV1`): its mark and version 1."""


def framed(body: bytes, correlation_id: str, reply_to: str | None = None) -> bytes:
    """``body`` as FastStream's binary message format carries it with these headers: the
    bytes its ``BinaryMessageFormatV1.encode`` makes of them (a test holds it to that), made
    without its coroutine and its writers on every command and reply. The sender's request and
    the rules service's reply both go so; `BinaryMessageFormatV1.parse` reads them."""
    headers = [b"correlation_id", correlation_id.encode()]
    if reply_to:
        headers += [b"reply_to", reply_to.encode()]
    packed = b"".join(struct.pack(">H", len(text)) + text for text in headers)
    start = len(_BINARY) + 8  # the headers' count, after the two offsets
    head = struct.pack(">IIH", start, start + 2 + len(packed), len(headers) // 2)
    return b"".join((_BINARY, head, packed, body))


DEFAULT_GAME = registry.DEFAULT_GAME
"""The game of an envelope that names none (`gameplatform.registry`)."""

GATEWAY = "gateway"
CLOCK = "clock"
SENDERS = (GATEWAY, CLOCK)
"""The services that put envelopes on the bus. Each writes only command streams of its own
(the gateway the plain ``rn:{pNN}:commands``, the clock ``rn:{pNN}:commands:clock``; the ACL
of infra/redis/users.acl enforces it), so the rules service knows who sent an envelope from
the stream it read it on and refuses a command that sender may not send (`Game.sender_of`):
a clock password cannot move a seat, a gateway password cannot claim a timeout."""


def streams_of(partitions: CommandPartitions, sender: str) -> CommandPartitions:
    """The command streams on which ``sender`` (one of `SENDERS`) sends."""
    return partitions.sent_by("" if sender == GATEWAY else sender)


class CommandEnvelope(msgspec.Struct, frozen=True):
    """A command for one game. ``command_id`` is chosen by the client: a retry with the same id
    returns the first outcome and appends nothing. ``seat`` is the authenticated seat the
    gateway vouches for (None for system commands such as creating the game).

    ``game`` names the game whose command it is (`gameplatform.get_game`); ``command`` is one
    of that game's commands. Envelopes without ``game`` are Renature's (every envelope written
    before a second game existed). The rules service checks it against the stream's game."""

    game_id: str
    command_id: str
    command: msgspec.Struct
    """One of the game's commands, or the gateway's `WithdrawJoin`."""
    seat: int | None = None
    game: str = DEFAULT_GAME


class WithdrawJoin(
    msgspec.Struct, frozen=True, tag=True, tag_field="type", forbid_unknown_fields=True
):
    """Not a game's command: the gateway's notice that the join it sent for ``seat`` under the
    envelope's command id (`join_command_id`) was abandoned (its claim lapsed before the game
    showed the seat taken). The rules service decides it (`gameserver.rules.withdrawals`): it
    records the join's refusal ``join_abandoned`` as that command id's outcome unless one is
    stored already (first writer wins), and answers the refusal, or the join's acceptance when
    the join landed first. Only the gateway sends it, with no seat, and only for a join's
    command id: it can never pre-empt a seat's move."""

    seat: int


JOIN_PREFIX = "join:"
"""Command ids of the gateway's joins: ``join:<seat>:<random>``. No client command id has a
colon (the gateway namespaces a seat's as ``seat<n>:<id>``), so none is taken for a join's."""


def join_command_id(seat: int, unique: str) -> str:
    """The command id of a join of ``seat`` (``unique``: a fresh random string)."""
    return f"{JOIN_PREFIX}{seat}:{unique}"


def is_join_of(command_id: str, seat: int) -> bool:
    """Whether ``command_id`` is the id of a join of ``seat`` (`join_command_id`)."""
    head = f"{JOIN_PREFIX}{seat}:"
    return command_id.startswith(head) and len(command_id) > len(head)


def withdrawal(game_id: str, command_id: str, seat: int, game: str) -> CommandEnvelope:
    """The envelope that withdraws the abandoned join ``command_id`` of ``seat``."""
    return CommandEnvelope(game_id, command_id, WithdrawJoin(seat), None, game)


class WireEnvelope(msgspec.Struct, frozen=True):
    """`CommandEnvelope` as read off the bus: the command still JSON, to be read by the
    decoder of the game the envelope names (two games' commands share tags such as
    ``CreateGame``, so no single union can read them all)."""

    game_id: str
    command_id: str
    command: msgspec.Raw
    seat: int | None = None
    game: str = DEFAULT_GAME


class Reply(msgspec.Struct, frozen=True):
    """The outcome of one command: accepted with the new version and the versions appended, or
    rejected with the rule error's code and a message a player can act on."""

    status: Literal["accepted", "rejected"]
    game_id: str
    command_id: str
    version: int = 0
    first_version: int = 0
    last_version: int = 0
    code: str | None = None
    message: str | None = None
    command_digest: str = ""
    """The `command_digest` of the command answered, so that a command id sent again with
    another command is told apart from a retry (empty in replies stored before it existed)."""


reply_decoder = msgspec.json.Decoder(Reply)
encoder = msgspec.json.Encoder()
_wire_decoder = msgspec.json.Decoder(WireEnvelope)
_withdraw_decoder = msgspec.json.Decoder(WithdrawJoin)


class UnknownGameError(ValueError):
    """An envelope names a game this platform does not host."""


def decode_envelope(body: bytes | str) -> CommandEnvelope:
    """The envelope with its command read by its game's decoder; raises msgspec's errors for
    malformed JSON or commands and `UnknownGameError` for a game that is not hosted."""
    wire = _wire_decoder.decode(body)
    if wire.game not in game_names():
        raise UnknownGameError(f"unknown game {wire.game!r}; games: {', '.join(game_names())}")
    try:
        command = get_game(wire.game).decode_command(wire.command)
    except msgspec.ValidationError as error:
        try:  # the one platform command, tried only once no game's command fits
            command = _withdraw_decoder.decode(wire.command)
        except msgspec.ValidationError:
            raise error from None
    return CommandEnvelope(wire.game_id, wire.command_id, command, wire.seat, wire.game)


def command_digest(command: msgspec.Struct) -> str:
    """SHA-256 of the command as sent (a creation's seed is blank on the bus)."""
    return hashlib.sha256(encoder.encode(command)).hexdigest()


@cache
def envelope_schema() -> dict[str, JsonValue]:
    """The JSON schema of an envelope as documents show it: ``command`` is one of the commands
    of the game named by ``game``."""
    schema = inline_schema(WireEnvelope)
    schema["properties"]["command"] = {
        "anyOf": [inline_schema(get_game(name).command_type) for name in game_names()]
        + [inline_schema(WithdrawJoin)],
        "description": "One command of the game named by `game`, or the gateway's "
        "`WithdrawJoin` of an abandoned join.",
    }
    schema["properties"]["game"]["enum"] = list(game_names())
    return schema
