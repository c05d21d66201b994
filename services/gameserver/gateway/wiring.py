"""The gateway assembled: the one place that includes the routers, installs the middleware and
the error handlers, and builds the OpenAPI document (`wire`, called by ``gateway.app``).

The routes live in ``gameserver.gateway.routers``, one module per concern, and call the use
cases (``gateway.case_book``); adding a router is one line in `ROUTERS`. Their order is the
order paths are matched in (the catalog before ``/games/{game_id}``: ``/games/catalog``) and
the order of the OpenAPI document. Middleware is added innermost first: the trusted proxies'
address sees a request first; the raw move path (`FastMoves`) comes after every limit and
CORS, before gzip, the ETags of finished games and the ``Allow`` of 405s.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.middleware.gzip import GZipMiddleware

from gameplatform import game_names, get_game
from gameserver.gateway.case_book import CaseBook
from gameserver.gateway.client_address import TrustedNetworks, TrustedProxies
from gameserver.gateway.dependencies import Gateway
from gameserver.gateway.disputes import DisputeGate
from gameserver.gateway.expiry import TokenExpiry
from gameserver.gateway.fast_moves import FastMoves
from gameserver.gateway.frontends import (
    ALLOWED_HEADERS,
    EXPOSED_HEADERS,
    GZIP_MIN_BYTES,
    AllowHeader,
    FinishedGameETags,
    JsonCors,
    SecurityHeaders,
    offline_docs,
)
from gameserver.gateway.http_errors import install_error_handlers
from gameserver.gateway.live_admission import DeniedHandshakes
from gameserver.gateway.live_budget import FrameBudget
from gameserver.gateway.openapi import BODIES, document_limits
from gameserver.gateway.openapi import install as install_openapi
from gameserver.gateway.ratelimit import Limiter, RateLimiting
from gameserver.gateway.request_limits import RequestLimits
from gameserver.gateway.routers import (
    audit_routes,
    boards_routes,
    catalog_routes,
    games_routes,
    live_routes,
    lobby_routes,
    play_routes,
    reads_routes,
    reclaim_routes,
    service_routes,
    sse_routes,
    web_routes,
)
from gameserver.runtime.settings import Settings

ROUTERS: tuple[APIRouter, ...] = (
    service_routes.router,
    catalog_routes.router,  # before /games/{game_id}: /games/catalog
    games_routes.router,
    play_routes.router,
    reclaim_routes.router,
    reads_routes.router,
    reads_routes.models,
    audit_routes.router,
    live_routes.router,
    lobby_routes.router,
    sse_routes.router,
    boards_routes.router,
)
"""The API's routers, in the order their paths are matched (the pages' come after the docs)."""


def wire(app: FastAPI, gateway: Gateway, settings: Settings) -> None:
    """Everything around ``gateway``'s routes: the use cases, the error shape, the routers, the
    docs pages and the web client, the browsers' middleware (CORS for the frontends part's
    origins), the limits (body size and depth always, the rate limits when enabled, seat tokens
    that lapse after the end unless no time is set), the document that says so, and outermost
    the security headers and the real client's address (the front door's trusted proxies)."""
    app.state.gateway = gateway
    app.state.cases = CaseBook.over(gateway)
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    offline_docs(app)  # /docs and /redoc on local assets
    app.include_router(web_routes.router)  # the web client, the dispute viewer, the picture
    app.mount("/static", StaticFiles(directory=web_routes.STATIC), name="static")
    _install_browsers(app, list(settings.frontends.cors_origins))
    limits, ttl = settings.limits, settings.gateway.token_ttl_after_end_s
    _document(app, limited=limits.enabled)
    app.add_middleware(RequestLimits, max_body_bytes=settings.gateway.max_body_bytes)
    app.add_middleware(DisputeGate)  # a busy desk refuses before the body is read
    if limits.enabled:  # outermost of the limits: a flood is turned away before its bodies
        limiter = Limiter(settings.store.redis_url, limits, prefix=settings.store.prefix)
        app.state.limiter = limiter
        app.add_middleware(RateLimiting, limiter=limiter, seats=gateway.tokens.holder_of)
        DeniedHandshakes.install()  # refused handshakes are no errors of the server
        gateway.spectator_frames = FrameBudget(limits.spectator_frames)
    if ttl is not None:
        gateway.token_expiry = TokenExpiry(gateway.redis, gateway.tokens, ttl)
    # Security headers on every answer (the limits' refusals too) and, outermost, the real
    # client's address for every limit and log.
    app.add_middleware(SecurityHeaders)
    trusted = TrustedNetworks.parse(settings.front_door.trusted_proxies)
    app.add_middleware(TrustedProxies, trusted=trusted)


def _install_browsers(app: FastAPI, origins: list[str]) -> None:
    """``Allow`` on 405s, ETags of finished games, gzip, the raw move path, and CORS for
    ``origins`` (none: off)."""
    app.add_middleware(AllowHeader)
    app.add_middleware(FinishedGameETags)
    app.add_middleware(GZipMiddleware, minimum_size=GZIP_MIN_BYTES)
    # The raw move path: inside CORS and every limit, outside what a move's answer never needs
    # (the three above: see gateway/fast_moves.py).
    app.add_middleware(FastMoves)
    if origins:  # outermost: a preflight is answered before anything else looks at it
        app.add_middleware(
            JsonCors,
            allow_origins=origins,
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=ALLOWED_HEADERS,
            expose_headers=EXPOSED_HEADERS,
            max_age=600,
        )


def _document(app: FastAPI, *, limited: bool) -> None:
    """The OpenAPI document: the msgspec bodies merged in, then the limits' answers (413 where a
    body is taken, 429 everywhere but ``/healthz`` when ``limited``)."""
    install_openapi(app, BODIES, strip=unencoded_state_fields())
    document_limits(app, limited=limited)


def unencoded_state_fields() -> dict[str, list[str]]:
    """Each hosted game's state fields that are never sent, by the state's schema name (its
    module and class: several games name their state ``GameState``)."""
    fields = {}
    for name in game_names():
        game = get_game(name)
        if game.state_unencoded:
            state = game.state_type
            fields[f"{state.__module__}.{state.__qualname__}"] = list(game.state_unencoded)
    return fields
