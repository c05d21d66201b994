"""What both adapters share: the commands a service builds or reads, from a game's types.

A game whose commands module has a creation, a ``JoinGame(seat, name)``, a ``StartGame()`` and
a union of the commands a seated player sends gets these members of the `Game` protocol by
naming those types on its adapter.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec

PLAYER_NAME_PATTERN = (
    "^[^\\x00-\\x1f\\x7f-\\x9f\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\ufeff]+$"
)
"""No control, zero-width or bidirectional-override characters (they could hide or reorder
what other players see)."""


@cache
def decoder(kind: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(kind)


def inline_schema(kind: Any) -> dict[str, Any]:
    """The JSON schema of a msgspec type with every ``$ref`` resolved in place, so it can be
    embedded into a document that has no ``$defs`` of its own (AsyncAPI, OpenAPI)."""
    schema = msgspec.json.schema(kind)
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return resolve(defs[node["$ref"].rsplit("/", 1)[-1]])
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


class CommandForms:
    """``join_command``, ``start_command``, ``is_creation``, ``needs_seat``, ``decode_command``
    and ``seat_command`` from the adapter's ``create_type``, ``join_type``, ``start_type``,
    ``command_type`` and ``seat_command_type``; ``sender_of`` from ``timeout_type``."""

    create_type: Any
    join_type: Any
    start_type: Any
    command_type: Any
    seat_command_type: Any
    cancel_type: Any = None
    leave_type: Any = None
    remove_type: Any = None
    resign_type: Any = None
    timeout_type: Any = None
    reclaim_type: Any = None
    """The seat commands the platform sends for any game (``CancelGame()``, ``LeaveGame(seat)``,
    ``RemovePlayer(seat)``, ``Resign(seat)``, ``ClaimTimeout(seat)``, ``ReclaimSeat(seat)``);
    None where a game has no such command yet (the gateway then answers 409 ``not_offered``)."""

    def seat_command_schema(self) -> dict[str, Any]:
        """The JSON schema of a command a seated player sends (each variant inlined, ``seat``
        optional: the token's seat is filled in)."""
        variants = inline_schema(self.seat_command_type)["anyOf"]
        for variant in variants:
            variant["required"].remove("seat")
        return {"anyOf": variants}

    def join_command(self, seat: int, name: str) -> Any:
        return self.join_type(seat=seat, name=name)

    def start_command(self) -> Any:
        return self.start_type()

    def is_creation(self, command: Any) -> bool:
        return isinstance(command, self.create_type)

    def needs_seat(self, command: Any) -> bool:
        """A seated player's command (a move), not a set-up one."""
        return isinstance(command, self.seat_command_type)

    def sender_of(self, command: Any) -> str:
        """The service that alone may send ``command``: ``clock`` for a timeout claim,
        ``gateway`` for everything else (the rules service refuses it from anyone else)."""
        timeout = self.timeout_type
        return "clock" if timeout is not None and isinstance(command, timeout) else "gateway"

    def decode_command(self, data: bytes | str) -> Any:
        return decoder(self.command_type).decode(data)

    def seat_command(self, payload: dict[str, Any]) -> Any:
        """A seated player's command from JSON-like data (raises ``msgspec.ValidationError``).
        Read as JSON by the type's cached decoder: ``msgspec.convert`` to a union works the
        union out again on every call, several times the cost of encoding and decoding."""
        return decoder(self.seat_command_type).decode(msgspec.json.encode(payload))

    def cancel_command(self) -> Any | None:
        return None if self.cancel_type is None else self.cancel_type()

    def leave_command(self, seat: int) -> Any | None:
        return None if self.leave_type is None else self.leave_type(seat=seat)

    def remove_command(self, seat: int) -> Any | None:
        return None if self.remove_type is None else self.remove_type(seat=seat)

    def resign_command(self, seat: int) -> Any | None:
        return None if self.resign_type is None else self.resign_type(seat=seat)

    def timeout_command(self, seat: int) -> Any | None:
        return None if self.timeout_type is None else self.timeout_type(seat=seat)

    def reclaim_command(self, seat: int) -> Any | None:
        return None if self.reclaim_type is None else self.reclaim_type(seat=seat)
