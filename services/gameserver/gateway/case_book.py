"""The use cases the routes call (`gameserver.gateway.use_cases`), built once per app over the
gateway's Redis-backed parts, and ``CasesDep``, the dependency that hands them to a route.

This is where the ports meet their adapters: the folded game states are the read side, the
`Gateway` sends commands and checks seat tokens, the `Lobby` keeps hosts, invitations and the
index, the cached seat tokens mark games and free seats, `RedisSeedVault` stages chosen seeds,
`RedisKeyLeases` and `SeatClaims` are the idempotency records, `SeatRecovery` the recovery
codes, and the identity provider (when there is one) verifies users. No route sees Redis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends
from starlette.requests import HTTPConnection

from gameserver.gateway.dependencies import Gateway
from gameserver.gateway.idempotency import RedisKeyLeases, SeatClaims
from gameserver.gateway.lobby_entries import Lobby
from gameserver.gateway.use_cases.game_creation import CreateGame
from gameserver.gateway.use_cases.game_listing import GameListing
from gameserver.gateway.use_cases.seat_actions import SeatActions
from gameserver.gateway.use_cases.seat_taking import ReclaimSeat, TakeSeat, Users
from gameserver.runtime.seed_vault import RedisSeedVault


@dataclass(frozen=True, slots=True)
class CaseBook:
    """Every use case of the lobby and the seats, ready to call."""

    create_game: CreateGame
    take_seat: TakeSeat
    reclaim_seat: ReclaimSeat
    seats: SeatActions
    listing: GameListing

    @classmethod
    def over(cls, gateway: Gateway) -> CaseBook:
        """The use cases over ``gateway``'s parts (its identity provider as set now)."""
        redis, layout = gateway.redis, gateway.layout
        lobby = Lobby(redis, layout)
        leases = RedisKeyLeases(redis, layout, gateway.command_timeout)
        users = Users(gateway.identity)
        return cls(
            create_game=CreateGame(
                gateway,
                lobby,
                RedisSeedVault(redis, layout),
                gateway.tokens,
                leases,
                allow_chosen_seeds=gateway.allow_chosen_seeds,
            ),
            take_seat=TakeSeat(
                gateway.games,
                gateway,
                lobby,
                users,
                leases,
                SeatClaims(redis, gateway.store, send=gateway.send),
                gateway.recovery,
            ),
            reclaim_seat=ReclaimSeat(gateway.games, users, gateway.recovery, gateway.tokens),
            seats=SeatActions(gateway.games, gateway, gateway, lobby, gateway.tokens),
            listing=GameListing(gateway.games, lobby, gateway.tokens),
        )


async def case_book_of(connection: HTTPConnection) -> CaseBook:
    """The app's use cases (a dependency of the routes that call one)."""
    cases: CaseBook = connection.app.state.cases
    return cases


CasesDep = Annotated[CaseBook, Depends(case_book_of)]
