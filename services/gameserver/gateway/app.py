"""The gateway application: HTTP and WebSocket endpoints for frontends (docs/http-api.md).

Every handler is a thin adapter: authenticate the seat, turn the request into a
``CommandEnvelope`` for the rules service and await its ``Reply``, or replay the game's stream
with the pure core and show the caller what its seat may see. Rules are never decided here.
The routes live in ``gameserver.gateway.routers``, one module per concern; this module
only assembles them: adding a router is one ``include_router`` line.
"""

from __future__ import annotations

from fastapi import FastAPI

from gameserver.gateway import sender as senders
from gameserver.gateway.client_address import TrustedNetworks, TrustedProxies
from gameserver.gateway.command_relay import seat_command
from gameserver.gateway.dependencies import Gateway
from gameserver.gateway.expiry import TokenExpiry
from gameserver.gateway.fast_moves import FastMoves
from gameserver.gateway.frontends import SecurityHeaders
from gameserver.gateway.frontends import install as install_frontends
from gameserver.gateway.http_errors import install_error_handlers
from gameserver.gateway.identity import IdentityProvider
from gameserver.gateway.openapi import BODIES, document_limits
from gameserver.gateway.openapi import install as install_openapi
from gameserver.gateway.ratelimit import Limiter, RateLimiting
from gameserver.gateway.request_limits import RequestLimits
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

__all__ = ["Gateway", "create_app", "seat_command"]

DEFAULT_COMMAND_TIMEOUT = 10.0


def create_app(
    settings: Settings,
    *,
    sender: senders.CommandSender | None = None,
    command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
) -> FastAPI:
    """The gateway of ``settings`` (its store, gateway, limits, front door, frontends and
    identity parts). ``sender`` replaces the rules-service client (tests); by default commands
    go over the bus through ``gameserver.runtime.rules_client``, answered within
    ``command_timeout`` seconds. The store's prefix, partitions and command partitions must
    match the other services' (they are the key layout and the command streams)."""
    store = settings.store
    gateway = Gateway.connect(
        store.redis_url,
        sender=sender,
        command_timeout=command_timeout,
        prefix=store.prefix,
        partitions=store.partitions,
        allow_chosen_seeds=settings.gateway.allow_chosen_seeds,
        command_partitions=store.command_partitions,
    )
    app = FastAPI(
        title="Renature gateway",
        version="1",
        description="Create, join and play Renature games; see docs/http-api.md.",
        lifespan=gateway.lifespan,
    )
    app.state.gateway = gateway
    gateway.identity = IdentityProvider.of(settings.identity)
    install_error_handlers(app)
    app.add_middleware(FastMoves)  # first added, innermost: every other middleware before it
    for router in (service_routes.router, catalog_routes.router, games_routes.router):
        app.include_router(router)  # the catalog before /games/{game_id}: /games/catalog
    routers = (play_routes.router, reclaim_routes.router, reads_routes.router, reads_routes.models)
    for router in (*routers, audit_routes.router, live_routes.router):
        app.include_router(router)
    # lobby, SSE, boards; CORS, gzip, ETags, offline docs
    install_frontends(app, origins=settings.frontends.cors_origins)
    web_routes.install(app)  # the reference web client, the dispute viewer and the board picture
    # /state sends a GameState without its static board (it is loaded by board_id).
    # Renature's state (named by its module: Renaissance has a GameState too) has its static
    # board in Python, not on the wire.
    install_openapi(app, BODIES, strip={"renature.state.GameState": ["board"]})
    _install_limits(app, settings)
    _install_outermost(app, settings.front_door.trusted_proxies)
    return app


def _install_limits(app: FastAPI, settings: Settings) -> None:
    """Put the limits in front of ``app`` (the gateway): body size and depth always, the
    rate limits when enabled (outermost, so a flood is turned away before its bodies are read),
    seat tokens that lapse after the end unless no time is set; and say so in the OpenAPI
    document (413 where a body is taken, 429 everywhere but ``/healthz``)."""
    gateway = app.state.gateway
    limits, ttl = settings.limits, settings.gateway.token_ttl_after_end_s
    app.add_middleware(RequestLimits, max_body_bytes=settings.gateway.max_body_bytes)
    if limits.enabled:
        limiter = Limiter(settings.store.redis_url, limits, prefix=settings.store.prefix)
        app.state.limiter = limiter
        app.add_middleware(RateLimiting, limiter=limiter, seats=gateway.tokens.seat_of)
    if ttl is not None:
        gateway.token_expiry = TokenExpiry(gateway.redis, gateway.tokens, ttl)
    document_limits(app, limited=limits.enabled)


def _install_outermost(app: FastAPI, trusted_proxies: str) -> None:
    """Security headers on every answer (the limits' refusals too) and, outermost, the real
    client's address for every limit and log."""
    app.add_middleware(SecurityHeaders)
    app.add_middleware(TrustedProxies, trusted=TrustedNetworks.parse(trusted_proxies))
