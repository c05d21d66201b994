"""What both adapters share: the commands a service builds or reads, from a game's types.

A game whose commands module has a creation, a ``JoinGame(seat, name)``, a ``StartGame()`` and
a union of the commands a seated player sends gets these members of the `Game` protocol by
naming those types on its adapter.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec


@cache
def decoder(kind: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(kind)


class CommandForms:
    """``join_command``, ``start_command``, ``is_creation``, ``needs_seat``, ``decode_command``
    and ``seat_command`` from the adapter's ``create_type``, ``join_type``, ``start_type``,
    ``command_type`` and ``seat_command_type``."""

    create_type: Any
    join_type: Any
    start_type: Any
    command_type: Any
    seat_command_type: Any

    def join_command(self, seat: int, name: str) -> Any:
        return self.join_type(seat=seat, name=name)

    def start_command(self) -> Any:
        return self.start_type()

    def is_creation(self, command: Any) -> bool:
        return isinstance(command, self.create_type)

    def needs_seat(self, command: Any) -> bool:
        """A seated player's command (a move), not a set-up one."""
        return isinstance(command, self.seat_command_type)

    def decode_command(self, data: bytes | str) -> Any:
        return decoder(self.command_type).decode(data)

    def seat_command(self, payload: dict[str, Any]) -> Any:
        """A seated player's command from JSON-like data (raises ``msgspec.ValidationError``)."""
        return msgspec.convert(payload, self.seat_command_type)
