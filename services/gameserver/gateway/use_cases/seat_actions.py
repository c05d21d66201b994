"""What a seat's player or the game's host does through an endpoint of its own: start the game,
cancel it, leave a seat or remove its player before the start, resign a started game, take a
seat back from the bot that plays it since its time ran out. Each sends the game's own command
(the game says what it offers: a game without one refuses ``not_offered``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from gameplatform.interface import HostedGame
from gameserver.gateway.use_cases.outcomes import Outcome, outcome_of
from gameserver.gateway.use_cases.ports import CommandBus, GameReads, Hosts, SeatCheck, SeatRegistry
from gameserver.gateway.use_cases.refusals import Refusal
from gameserver.runtime.bus import CommandEnvelope


class SeatActions:
    """The lobby's and the table's actions on seats, over the read side, the command bus, the
    seat tokens and the hosts."""

    def __init__(
        self,
        games: GameReads,
        bus: CommandBus,
        seats: SeatCheck,
        hosts: Hosts,
        registry: SeatRegistry,
    ) -> None:
        self._games = games
        self._bus = bus
        self._seats = seats
        self._hosts = hosts
        self._registry = registry

    async def seated(self, game_id: str, token: str | None) -> int:
        """The caller's seat in an existing game: ``not_found`` for an unknown game first,
        then the seat check's refusals."""
        await self._games.require(game_id)
        return await self._seats.seat_of_token(game_id, token)

    async def start(self, game_id: str, token: str | None) -> Outcome:
        """Start the game once every seat is taken: the host or any seated player may."""
        game = await self._games.game_of(game_id)
        host = await self._hosts.is_host(game_id, token)
        seat = None if host else await self.seated(game_id, token)
        command_id = f"start:{seat}:{uuid.uuid4().hex}"
        envelope = CommandEnvelope(game_id, command_id, game.start_command(), seat, game.name)
        return outcome_of(await self._bus.send(envelope), command_id)

    async def cancel(self, game_id: str, token: str | None) -> Outcome:
        """The host cancels a game that has not started (the rules refuse it once it has)."""
        await self._games.require(game_id)
        if not token:
            raise Refusal(
                "unauthenticated", "missing_token", "Send the host token as 'Bearer <token>'."
            )
        if not await self._hosts.is_host(game_id, token):
            raise Refusal(
                "forbidden", "not_host", "Only the host (who created the game) may do this."
            )
        return await self._act(game_id, lambda game: game.cancel_command(), None)

    async def leave(self, game_id: str, seat: int, token: str | None) -> Outcome:
        """Before the start: the seat's player leaves (with the seat's token) or the host
        removes them (with the host token). The seat is free again; its token no longer
        works."""
        await self._games.require(game_id)
        if not token:
            raise Refusal(
                "unauthenticated", "missing_token", "Send the seat's token or the host token."
            )
        if await self._hosts.is_host(game_id, token):
            outcome = await self._act(game_id, lambda game: game.remove_command(seat), None)
        else:
            if await self._seats.seat_of_token(game_id, token) != seat:
                raise Refusal(
                    "forbidden", "not_your_seat", "Only its player or the host may free a seat."
                )
            outcome = await self._act(game_id, lambda game: game.leave_command(seat), seat)
        await self._registry.free(game_id, seat)
        return outcome

    async def resign(self, game_id: str, token: str | None) -> Outcome:
        """Give up a started game: the seat is out of the game (the rules refuse it before the
        start)."""
        seat = await self.seated(game_id, token)
        return await self._act(game_id, lambda game: game.resign_command(seat), seat)

    async def take_back(self, game_id: str, token: str | None) -> Outcome:
        """Take the caller's seat back from the bot that plays it since its time ran out."""
        seat = await self.seated(game_id, token)
        return await self._act(game_id, lambda game: game.reclaim_command(seat), seat)

    async def _act(
        self, game_id: str, make: Callable[[HostedGame], Any], seat: int | None
    ) -> Outcome:
        return await send_seat_action(self._games, self._bus, game_id, make, seat)


async def send_seat_action(
    games: GameReads,
    bus: CommandBus,
    game_id: str,
    make: Callable[[HostedGame], Any],
    seat: int | None,
) -> Outcome:
    """Send the game's own command for a seat action (``make`` asks the game for it);
    ``conflict`` (``not_offered``) where the game has none, the rules' refusal as it is. (The
    move path sends a bot-played seat's take-back with it too: `command_relay.take_back_first`.)"""
    game = await games.game_of(game_id)
    command = make(game)
    if command is None:
        raise Refusal("conflict", "not_offered", f"A {game.name} game does not offer this.")
    command_id = f"{type(command).__name__}:{uuid.uuid4().hex}"
    envelope = CommandEnvelope(game_id, command_id, command, seat, game.name)
    return outcome_of(await bus.send(envelope), command_id)
