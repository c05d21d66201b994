"""Serve the gateway with uvicorn: uvloop and httptools, several worker processes, no access
log unless asked for.

``serve(settings, host, port)`` runs ``settings.front_door.gateway_workers`` processes
(``RENATURE_GATEWAY_WORKERS``, default 1) that share one listening socket (uvicorn binds it
once and hands it to each worker; the kernel spreads the connections). Each worker builds its
own app from the same settings (`app_factory`: `Settings.hand_to_workers` puts them, command-line
overrides included, into the environment the workers inherit, as ``RENATURE_GATEWAY_SETTINGS``,
and `Settings.handed_to_worker` reads them back in each). Every worker keeps
its own caches (game states, seat tokens) and its own reply channel, so any worker can answer
any request.

The access log (a JSON line per request) is off by default: at a few thousand requests a
second it cost more CPU than the gateway's own work. ``RENATURE_ACCESS_LOG=on`` logs every
request, ``RENATURE_ACCESS_LOG=0.01`` one in a hundred (see `gameserver.runtime.logging`).

Slow and huge requests are bounded by `gateway.front_door` (header and body timeouts, header
size and count, connections per address); uvicorn's own ``X-Forwarded-For`` handling (which
trusts 127.0.0.1 by default) is off: `gateway.client_address` believes only the proxies of
``RENATURE_TRUSTED_PROXIES``.
"""

from __future__ import annotations

from typing import Any

from gameserver.gateway.front_door import GuardedHttpTools, uvicorn_options
from gameserver.runtime import collector
from gameserver.runtime.logging import configure_logging
from gameserver.runtime.settings import Settings

WORKER_HEALTHCHECK_S = 30
"""How long uvicorn waits for a worker process to answer its health check before it kills the
worker and starts another. Uvicorn's default, 5 s, is shorter than a worker's start (Python,
the app's imports) on a busy machine: on two loaded cores every worker of four was killed
before it could serve, again and again, for most of a minute."""


def serve(settings: Settings, *, host: str, port: int) -> None:
    """Run the gateway until SIGINT/SIGTERM (blocking)."""
    import uvicorn

    _configure_logging(settings)
    settings.hand_to_workers()  # each worker builds its app from these very settings
    uvicorn.run(
        "gameserver.gateway.server:app_factory",
        factory=True,
        host=host,
        port=port,
        workers=settings.front_door.gateway_workers,
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_S,
        loop="uvloop",
        **uvicorn_options(settings.front_door),  # httptools with bounds on slow clients
        access_log=settings.logging.access_log_sample > 0,
        log_config=None,  # the logs stay JSON (configure_logging)
        server_header=False,
    )


def app_factory() -> Any:
    """The app of one worker process (uvicorn calls it in each, before it serves)."""
    from gameserver.gateway.app import create_app

    settings = Settings.handed_to_worker()
    _configure_logging(settings)
    app = create_app(settings)
    limiter = getattr(app.state, "limiter", None)  # rate limits on: refused spectators
    GuardedHttpTools.set_up(settings.front_door, None if limiter is None else limiter.live_refusals)
    collector.tune()
    return app


def _configure_logging(settings: Settings) -> None:
    configure_logging(
        settings.logging.log_level,
        service="gateway",
        access_log_sample=settings.logging.access_log_sample,
    )
