"""Serve the gateway with uvicorn: uvloop and httptools, several worker processes, no access
log unless asked for.

``serve(settings, host, port)`` runs ``settings.gateway_workers`` processes
(``RENATURE_GATEWAY_WORKERS``, default 1) that share one listening socket (uvicorn binds it
once and hands it to each worker; the kernel spreads the connections). Each worker builds its
own app from the same settings (`app_factory`: they travel to the workers in the environment as
``RENATURE_GATEWAY_SETTINGS``, so command-line overrides reach them too). Every worker keeps
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

import dataclasses
import json
import os
from typing import Any

from gameserver.gateway.front_door import FrontDoor
from gameserver.gateway.worker_settings import SETTINGS_ENV, settings_from_env
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

    configure_logging(
        settings.log_level, service="gateway", access_log_sample=settings.access_log_sample
    )
    os.environ[SETTINGS_ENV] = json.dumps(dataclasses.asdict(settings))
    uvicorn.run(
        "gameserver.gateway.server:app_factory",
        factory=True,
        host=host,
        port=port,
        workers=settings.gateway_workers,
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_S,
        loop="uvloop",
        **FrontDoor.from_env().uvicorn_options(),  # httptools with bounds on slow clients
        access_log=settings.access_log_sample > 0,
        log_config=None,  # the logs stay JSON (configure_logging)
        server_header=False,
    )


def app_factory() -> Any:
    """The app of one worker process (uvicorn calls it in each)."""
    from gameserver.gateway.app import app_from_settings

    settings = settings_from_env()
    configure_logging(
        settings.log_level, service="gateway", access_log_sample=settings.access_log_sample
    )
    return app_from_settings(settings)
