"""What every route shares: the `Gateway` (Redis, store, seat tokens, cached states, the
command sender) and the caller's credentials, as FastAPI dependencies.

Routes take ``gateway: GatewayDep`` and ``credentials: Credentials`` and stay a few lines each.
The checks that may fail (unknown game, missing or wrong token) are calls inside the route,
not dependencies, so a malformed request is still answered 422 before any lookup is made.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import Depends, FastAPI, Path
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from redis.asyncio import Redis
from starlette.requests import HTTPConnection

from eventstore import DEFAULT_COMMAND_PARTITIONS, CommandPartitions, KeyLayout, RedisEventStore
from eventstore.redis_client import blocking_pool, is_cluster_url, redis_client
from gameserver.gateway import sender as senders
from gameserver.gateway.disputes import DisputeDesk
from gameserver.gateway.expiry import TokenExpiry
from gameserver.gateway.finished import FinishedReads
from gameserver.gateway.game_states import GameStates
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.identity import IdentityProvider
from gameserver.gateway.live_budget import FrameBudget
from gameserver.gateway.live_hub import LiveHub
from gameserver.gateway.seat_recovery import SeatRecovery
from gameserver.gateway.spectator_backlog import SpectatorBacklogs
from gameserver.gateway.token_cache import CachedSeatTokens
from gameserver.projectors.read_models import ReadModels
from gameserver.runtime.bus import CommandEnvelope, Reply
from gameserver.runtime.logging import bind_command, debugging, get_logger
from gameserver.runtime.signing import KeySet, published_keys

GATEWAY_LOG = "renature.gateway"
log = get_logger(GATEWAY_LOG)

REDIS_CONNECTIONS = 200
"""Connections the gateway opens to Redis at most (requests beyond that wait their turn)."""

bearer = HTTPBearer(auto_error=False, description="The seat token returned by joining a seat")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
GameId = Annotated[
    str,
    Path(
        description="The game id returned by POST /games (1-64 characters without : { } "
        "or white space: another is 422 before any lookup)",
        min_length=1,
        max_length=64,
        pattern=r"^[^:{}\s]+$",
    ),
]


def token_of(credentials: HTTPAuthorizationCredentials | None) -> str | None:
    """The bearer token a request carries (None without one)."""
    return None if credentials is None else credentials.credentials


class Gateway:
    """What the handlers share: Redis, the store, seat tokens, cached states, the sender."""

    def __init__(
        self,
        redis: Redis,
        sender: senders.CommandSender,
        command_timeout: float,
        store: RedisEventStore,
        *,
        allow_chosen_seeds: bool = False,
        owned_sender: senders.BusSender | None = None,
    ) -> None:
        self.redis = redis
        self.store = store
        self.tokens = CachedSeatTokens(redis, self.store.layout)  # no lookup per request
        self.games = GameStates(self.store)
        self.finished = FinishedReads(redis, self.store, self.games)
        self.live = LiveHub(self.store.layout, redis)  # the live channels' feed readers
        self.token_expiry: TokenExpiry | None = None  # set by limits.install
        self.recovery = SeatRecovery(redis, self.store.layout)  # seats that follow a player
        self.identity: IdentityProvider | None = None  # a frontend's accounts (create_app)
        self.disputes = DisputeDesk()  # uploads inspected off the event loop
        self.spectator_frames: FrameBudget | None = None  # set with the rate limits
        self.spectator_backlogs = SpectatorBacklogs()  # spectators' backlogs take turns
        self.sender = sender
        self.command_timeout = command_timeout
        self.allow_chosen_seeds = allow_chosen_seeds
        self._owned_sender = owned_sender
        self._models: dict[str, ReadModels] = {}  # the projectors' models, read by name

    @classmethod
    def connect(
        cls,
        redis_url: str,
        *,
        sender: senders.CommandSender | None,
        command_timeout: float,
        prefix: str,
        partitions: int,
        allow_chosen_seeds: bool,
        command_partitions: int = DEFAULT_COMMAND_PARTITIONS,
    ) -> Gateway:
        """A gateway on its own connection pool; commands go over the bus unless ``sender``
        replaces the transport (tests)."""
        # Requests wait for a free connection rather than fail when many are in flight at once.
        if is_cluster_url(redis_url):  # a RedisCluster: a pool per node (eventstore.redis_client)
            redis = redis_client(redis_url)  # no blocking pool there: CLUSTER_NODE_CONNECTIONS
        else:
            pool = blocking_pool(
                redis_url, max_connections=REDIS_CONNECTIONS, timeout=command_timeout
            )
            redis = Redis.from_pool(pool)
        store = RedisEventStore(redis, prefix=prefix, partitions=partitions)
        owned: senders.BusSender | None = None
        if sender is None:
            streams = CommandPartitions(store.layout, command_partitions)
            sender = owned = senders.BusSender(redis, streams=streams)
        return cls(
            redis,
            sender,
            command_timeout,
            store,
            allow_chosen_seeds=allow_chosen_seeds,
            owned_sender=owned,
        )

    @property
    def layout(self) -> KeyLayout:
        return self.store.layout

    @asynccontextmanager
    async def lifespan(self, _: FastAPI) -> AsyncIterator[None]:
        """The app's lifespan: close the bus client and the Redis pool on shutdown."""
        try:
            yield
        finally:
            await self.live.aclose()
            self.disputes.close()
            if self._owned_sender is not None:
                await self._owned_sender.aclose()
            await self.redis.aclose()

    async def ping(self) -> None:
        """Nothing when Redis answers; its error otherwise."""
        await self.redis.ping()

    async def signing_keys(self) -> KeySet:
        """Every key the rules service signs game records with (`runtime.signing`)."""
        return await published_keys(self.redis, self.layout)

    async def read_model(self, name: str, game_id: str) -> tuple[int, bytes] | None:
        """The projection ``name``'s model of a game and the version it shows, if projected."""
        models = self._models.get(name)
        if models is None:
            models = self._models[name] = ReadModels(self.redis, self.layout, name)
        return await models.read(game_id)

    async def send(self, envelope: CommandEnvelope) -> Reply:
        """Send a command and await its reply; 504 when the rules service does not answer in
        time, 503 when it cannot be reached. The command may still be applied after a timeout:
        retrying with the same command id is safe and returns its one outcome."""
        kind = type(envelope.command).__name__  # never the command itself (it may hold a seed)
        try:
            reply = await self.sender.send(envelope, self.command_timeout)
        except TimeoutError as error:  # includes rules_client.CommandTimeout
            with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
                log.warning("gateway_command_timeout", command=kind)
            raise ApiError(
                504, "rules_timeout", "The rules service did not answer in time; retry."
            ) from error
        except senders.SenderUnavailableError as error:
            with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
                log.error("gateway_rules_unavailable", command=kind, error=str(error))
            raise ApiError(  # the bus is Redis: the store is unreachable
                503, "store_unavailable", "The game store cannot be reached; retry."
            ) from error
        # DEBUG only: a line per command cost more CPU than the gateway's own work (refusals
        # are logged by the rules service); the command's identity is bound only to lines
        # written, never on the way of every move.
        if debugging(GATEWAY_LOG):
            with bind_command(envelope.game_id, envelope.command_id, envelope.seat):
                log.debug("gateway_command", command=kind, status=reply.status, code=reply.code)
        return reply

    async def seat_of(self, game_id: str, credentials: HTTPAuthorizationCredentials | None) -> int:
        """The seat the bearer token belongs to: 401 without a token, 403 for a wrong one."""
        if credentials is None or not credentials.credentials:
            raise ApiError(401, "missing_token", "Send your seat token as 'Bearer <token>'.")
        seat = await self.tokens.seat_of(game_id, credentials.credentials)
        if seat is None:
            raise ApiError(403, "invalid_token", "This token holds no seat in this game.")
        if self.token_expiry is not None:
            await self.token_expiry.check(self.games, game_id)
        return seat

    async def seat_of_token(self, game_id: str, token: str | None) -> int:
        """`seat_of` for a bare token (the use cases' seat check, `use_cases.ports.SeatCheck`)."""
        bearer = (
            None
            if token is None
            else HTTPAuthorizationCredentials(scheme="Bearer", credentials=token)
        )
        return await self.seat_of(game_id, bearer)

    async def seated(self, game_id: str, credentials: HTTPAuthorizationCredentials | None) -> int:
        """The caller's seat in an existing game: 404 for an unknown game first, then 401/403
        as `seat_of`."""
        await self.games.require(game_id)
        return await self.seat_of(game_id, credentials)

    async def viewer_of(
        self, game_id: str, credentials: HTTPAuthorizationCredentials | None
    ) -> int | None:
        """The caller's seat, or None for a spectator (no token); 403 for a wrong token."""
        return None if credentials is None else await self.seat_of(game_id, credentials)


async def gateway_of(connection: HTTPConnection) -> Gateway:
    """The app's shared `Gateway` (a dependency of every route, HTTP or WebSocket). A
    coroutine: FastAPI runs a plain function's dependency in its thread pool, a thread hop for
    every request."""
    gateway: Gateway = connection.app.state.gateway
    return gateway


GatewayDep = Annotated[Gateway, Depends(gateway_of)]
