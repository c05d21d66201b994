"""The message contract between the services. Everything on the bus is msgspec JSON.

- Commands go to the command stream of their game's partition (``COMMAND_PARTITIONS``) as a
  ``CommandEnvelope``; the rules service consumes those streams with the consumer group
  ``RULES_GROUP`` and answers every envelope with a ``Reply`` (FastStream request/reply: the
  gateway awaits the reply of the message it published).
- Events go to the event store (``eventstore``): one stream per game plus partition feeds,
  which the projectors consume with their own consumer groups.
- Read models are Redis hashes written by the projectors (see ``gameserver.projectors``).
"""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any, Literal

import msgspec

from eventstore import CommandPartitions
from gameplatform import game_names, get_game, registry
from gameplatform.forms import inline_schema

COMMAND_PARTITIONS = CommandPartitions()
"""The command streams under the default layout and count (``rn:{p00}:commands`` ..
``rn:{p03}:commands``); services configured otherwise use ``Settings.commands``."""
RULES_GROUP = "rules"
BOARD_GROUP = "board-projector"
SCORE_GROUP = "score-projector"


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
    command: Any
    seat: int | None = None
    game: str = DEFAULT_GAME


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


class UnknownGameError(ValueError):
    """An envelope names a game this platform does not host."""


def decode_envelope(body: bytes | str) -> CommandEnvelope:
    """The envelope with its command read by its game's decoder; raises msgspec's errors for
    malformed JSON or commands and `UnknownGameError` for a game that is not hosted."""
    wire = _wire_decoder.decode(body)
    if wire.game not in game_names():
        raise UnknownGameError(f"unknown game {wire.game!r}; games: {', '.join(game_names())}")
    command = get_game(wire.game).decode_command(wire.command)
    return CommandEnvelope(wire.game_id, wire.command_id, command, wire.seat, wire.game)


def command_digest(command: Any) -> str:
    """SHA-256 of the command as sent (a creation's seed is blank on the bus)."""
    return hashlib.sha256(encoder.encode(command)).hexdigest()


@cache
def envelope_schema() -> dict[str, Any]:
    """The JSON schema of an envelope as documents show it: ``command`` is one of the commands
    of the game named by ``game``."""
    schema = inline_schema(WireEnvelope)
    schema["properties"]["command"] = {
        "anyOf": [inline_schema(get_game(name).command_type) for name in game_names()],
        "description": "One command of the game named by `game`.",
    }
    schema["properties"]["game"]["enum"] = list(game_names())
    return schema
