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

from eventstore import DEFAULT_COMMAND_PARTITIONS, DEFAULT_PARTITIONS, DEFAULT_PREFIX
from gameserver.gateway import sender as senders
from gameserver.gateway.command_relay import seat_command
from gameserver.gateway.dependencies import Gateway
from gameserver.gateway.identity import IdentityProvider
from gameserver.gateway.ratelimit import RateLimits
from gameserver.gateway.request_limits import MAX_BODY_BYTES
from gameserver.gateway.wiring import wire
from gameserver.runtime.settings import Settings

__all__ = ["Gateway", "app_from_settings", "create_app", "seat_command"]

DEFAULT_COMMAND_TIMEOUT = 10.0


# long: every option of the gateway named and passed on
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
    after the end) are those of `gateway.wiring.wire`; the proxies
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
    gateway.identity = identity
    wire(
        app,
        gateway,
        redis_url,
        prefix=prefix,
        max_body_bytes=max_body_bytes,
        rate_limits=rate_limits,
        token_ttl_after_end_s=token_ttl_after_end_s,
        trusted_proxies=trusted_proxies,
    )
    return app


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
