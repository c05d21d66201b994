"""The gateway application: HTTP and WebSocket endpoints for frontends (docs/http-api.md).

Every handler is a thin adapter: authenticate the seat, turn the request into a
``CommandEnvelope`` for the rules service and await its ``Reply``, or replay the game's stream
with the pure core and show the caller what its seat may see. Rules are never decided here.
The routes live in ``gameserver.gateway.routers``, one module per concern, and call the use
cases of ``gameserver.gateway.use_cases``; this module makes the `Gateway` and the app, and
``gameserver.gateway.wiring`` assembles them.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.telemetry import TelemetryConfig

from gameserver.gateway import sender as senders
from gameserver.gateway.command_relay import seat_command
from gameserver.gateway.dependencies import Gateway
from gameserver.gateway.identity import IdentityProvider
from gameserver.gateway.wiring import wire
from gameserver.runtime.settings import Settings

__all__ = ["Gateway", "create_app", "seat_command"]

DEFAULT_COMMAND_TIMEOUT = 10.0
TELEMETRY_OFF: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}
"""FastAPI's own OpenTelemetry (traces, metrics and logs per request) off: unless the settings
turn it on (``RENATURE_OPENTELEMETRY``, by default on where the deployment asks for
OpenTelemetry). FastAPI asks on every request whether a provider has been set up, and that
question alone cost 8 us a request here (0.2 us with its telemetry off)."""


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
    match the other services' (they are the key layout and the command streams); the limits,
    the trusted proxies and CORS are those `gateway.wiring.wire` installs."""
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
        title="Game server gateway",
        version="1",
        description=(
            "Create, join and play the hosted games (GET /games/catalog lists them); "
            "see docs/http-api.md."
        ),
        lifespan=gateway.lifespan,
        telemetry=None if settings.logging.opentelemetry else TELEMETRY_OFF,
    )
    gateway.identity = IdentityProvider.of(settings.identity)
    wire(app, gateway, settings)
    return app
