"""The gateway application: HTTP and WebSocket endpoints for frontends (docs/http-api.md).

Every handler is a thin adapter: authenticate the seat, turn the request into a
``CommandEnvelope`` for the rules service and await its ``Reply``, or replay the game's stream
with the pure core and show the caller what its seat may see. Rules are never decided here.
The routes live in ``gameserver.gateway.routers``, one module per concern; this module
only assembles them: adding a router is one ``include_router`` line.
"""

from __future__ import annotations

from fastapi import FastAPI

from eventstore import DEFAULT_COMMAND_PARTITIONS, DEFAULT_PARTITIONS, DEFAULT_PREFIX
from gameserver.gateway import sender as senders
from gameserver.gateway.client_address import TrustedNetworks, TrustedProxies
from gameserver.gateway.command_relay import seat_command
from gameserver.gateway.dependencies import Gateway
from gameserver.gateway.disputes import DisputeGate
from gameserver.gateway.expiry import TokenExpiry
from gameserver.gateway.fast_moves import FastMoves
from gameserver.gateway.frontends import SecurityHeaders
from gameserver.gateway.frontends import install as install_frontends
from gameserver.gateway.http_errors import install_error_handlers
from gameserver.gateway.identity import IdentityProvider
from gameserver.gateway.live_budget import FrameBudget
from gameserver.gateway.openapi import BODIES, document_limits
from gameserver.gateway.openapi import install as install_openapi
from gameserver.gateway.ratelimit import Limiter, RateLimiting, RateLimits
from gameserver.gateway.request_limits import MAX_BODY_BYTES, RequestLimits
from gameserver.gateway.routers import (
    audit_routes,
    catalog_routes,
    games_routes,
    live_routes,
    play_routes,
    reads_routes,
    reclaim_routes,
    service_routes,
    web_routes,
)
from gameserver.runtime.settings import Settings

__all__ = ["Gateway", "app_from_settings", "create_app", "seat_command"]

DEFAULT_COMMAND_TIMEOUT = 10.0


# long: the one place that assembles the gateway, every option named
def create_app(
    redis_url: str,
    *,
    sender: senders.CommandSender | None = None,
    command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
    prefix: str = DEFAULT_PREFIX,
    partitions: int = DEFAULT_PARTITIONS,
    command_partitions: int = DEFAULT_COMMAND_PARTITIONS,
    allow_chosen_seeds: bool = False,
    rate_limits: RateLimits | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    token_ttl_after_end_s: int | None = None,
    trusted_proxies: str = "",
    identity: IdentityProvider | None = None,
) -> FastAPI:
    """The gateway for the Redis at ``redis_url``. ``sender`` replaces the rules-service client
    (tests); by default commands go over the bus through ``gameserver.runtime.rules_client``.
    ``prefix``, ``partitions`` and ``command_partitions`` must match the other services (they
    are the key layout and the command streams).
    ``allow_chosen_seeds`` lets ``POST /games`` take a seed: whoever chooses the seed knows
    every hand, so only test, bot and tournament servers switch it on. The limits (body size,
    rate limits when ``rate_limits`` is given, seat tokens lapsing ``token_ttl_after_end_s``
    after the end) are those of `_install_limits`; the proxies
    whose ``X-Forwarded-For`` is believed, `gateway.client_address`'s (none by default);
    ``identity`` the provider whose signed tokens bind seats to users (none by default)."""
    gateway = Gateway.connect(
        redis_url,
        sender=sender,
        command_timeout=command_timeout,
        prefix=prefix,
        partitions=partitions,
        allow_chosen_seeds=allow_chosen_seeds,
        command_partitions=command_partitions,
    )
    app = FastAPI(
        title="Renature gateway",
        version="1",
        description="Create, join and play Renature games; see docs/http-api.md.",
        lifespan=gateway.lifespan,
    )
    app.state.gateway = gateway
    gateway.identity = identity
    install_error_handlers(app)
    app.add_middleware(FastMoves)  # first added, innermost: every other middleware before it
    for router in (service_routes.router, catalog_routes.router, games_routes.router):
        app.include_router(router)  # the catalog before /games/{game_id}: /games/catalog
    routers = (play_routes.router, reclaim_routes.router, reads_routes.router, reads_routes.models)
    for router in (*routers, audit_routes.router, live_routes.router):
        app.include_router(router)
    install_frontends(app)  # lobby, SSE, boards; CORS, gzip, ETags, offline docs
    web_routes.install(app)  # the reference web client, the dispute viewer and the board picture
    # /state sends a GameState without its static board (it is loaded by board_id).
    # Renature's state (named by its module: Renaissance has a GameState too) has its static
    # board in Python, not on the wire.
    install_openapi(app, BODIES, strip={"renature.state.GameState": ["board"]})
    _install_limits(
        app,
        redis_url,
        prefix=prefix,
        max_body_bytes=max_body_bytes,
        rate_limits=rate_limits,
        token_ttl_after_end_s=token_ttl_after_end_s,
    )
    _install_outermost(app, trusted_proxies)
    return app


def _install_limits(
    app: FastAPI,
    redis_url: str,
    *,
    prefix: str,
    max_body_bytes: int = MAX_BODY_BYTES,
    rate_limits: RateLimits | None = None,
    token_ttl_after_end_s: int | None = None,
) -> None:
    """Put the limits in front of ``app`` (the gateway): body size and depth always, the
    rate limits when ``rate_limits`` is given and enabled (outermost, so a flood is turned
    away before its bodies are read), seat tokens that lapse after the end when
    ``token_ttl_after_end_s`` is given; and say so in the OpenAPI document (413 where a body
    is taken, 429 everywhere but ``/healthz``)."""
    gateway = app.state.gateway
    app.add_middleware(RequestLimits, max_body_bytes=max_body_bytes)
    app.add_middleware(DisputeGate)  # a busy desk refuses before the body is read
    if rate_limits is not None and rate_limits.enabled:
        limiter = Limiter(redis_url, rate_limits, prefix=prefix)
        app.state.limiter = limiter
        app.add_middleware(RateLimiting, limiter=limiter, seats=gateway.tokens.seat_of)
        gateway.spectator_frames = FrameBudget(rate_limits.spectator_frames)
    if token_ttl_after_end_s is not None:
        gateway.token_expiry = TokenExpiry(gateway.redis, gateway.tokens, token_ttl_after_end_s)
    document_limits(app, limited=rate_limits is not None and rate_limits.enabled)


def _install_outermost(app: FastAPI, trusted_proxies: str) -> None:
    """Security headers on every answer (the limits' refusals too) and, outermost, the real
    client's address for every limit and log."""
    app.add_middleware(SecurityHeaders)
    app.add_middleware(TrustedProxies, trusted=TrustedNetworks.parse(trusted_proxies))


def app_from_settings(settings: Settings) -> FastAPI:
    """The gateway configured like every other service: from the shared settings."""
    return create_app(
        settings.redis_url,
        prefix=settings.prefix,
        partitions=settings.partitions,
        command_partitions=settings.command_partitions,
        allow_chosen_seeds=settings.allow_chosen_seeds,
        rate_limits=RateLimits.from_env() if settings.rate_limits else None,
        max_body_bytes=settings.max_body_bytes,
        token_ttl_after_end_s=settings.token_ttl_after_end_s,
        trusted_proxies=settings.trusted_proxies,
        identity=IdentityProvider.from_env(),
    )
