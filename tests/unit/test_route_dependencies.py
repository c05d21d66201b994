"""No route of the gateway runs a dependency or a handler in the thread pool: FastAPI runs a
plain function there, a thread hop (and a worker thread's wake-up) for every request that uses
it; the shared ones (`gateway_of`, `case_book_of`) are on nearly every route. And FastAPI's own
telemetry, which asks on every request whether OpenTelemetry is set up, is off unless the
deployment asks for it."""

from __future__ import annotations

import inspect
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, APIWebSocketRoute

from gameserver.gateway.app import create_app
from gameserver.gateway.wiring import ROUTERS
from gameserver.runtime.settings import Settings
from support.gateway import gateway_settings


def threaded(dependant: Dependant) -> list[str]:
    """The calls of ``dependant``'s tree that FastAPI would run in its thread pool."""
    found = []
    call: Any = dependant.call
    if call is not None and not (
        inspect.iscoroutinefunction(call)
        or inspect.iscoroutinefunction(type(call).__call__)  # an instance (HTTPBearer)
        or inspect.isasyncgenfunction(call)
    ):
        found.append(getattr(call, "__qualname__", repr(call)))
    for sub in dependant.dependencies:
        found += threaded(sub)
    return found


def test_no_route_runs_in_the_thread_pool() -> None:
    create_app(gateway_settings("redis://127.0.0.1:6379"))  # every router wired
    routes = [
        route
        for router in ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute | APIWebSocketRoute)
    ]
    assert len(routes) > 20
    offenders = {route.path: threaded(route.dependant) for route in routes}
    assert {path: calls for path, calls in offenders.items() if calls} == {}


def test_fastapis_own_telemetry_is_on_only_where_the_deployment_asks_for_opentelemetry() -> None:
    """FastAPI asks on every request whether an OpenTelemetry provider is set up: the gateway
    turns its telemetry off unless the deployment asks for OpenTelemetry (or the setting says
    on), and then leaves FastAPI's defaults (traces, metrics and logs per request)."""
    asked = [{"OTEL_SERVICE_NAME": "gateway"}, {"FASTAPI_OTEL_AUTO_CONFIGURE": "true"}]
    for env in asked:
        assert Settings.from_env(env).logging.opentelemetry is True
    for env in [{}, {"FASTAPI_OTEL_AUTO_CONFIGURE": "false"}, {"REDIS_URL": "redis://x:1"}]:
        assert Settings.from_env(env).logging.opentelemetry is False
    both = {"OTEL_SERVICE_NAME": "gateway", "RENATURE_OPENTELEMETRY": "off"}
    assert Settings.from_env(both).logging.opentelemetry is False
    assert Settings.from_env({"RENATURE_OPENTELEMETRY": "on"}).logging.opentelemetry is True
    settings = gateway_settings("redis://127.0.0.1:6379")
    quiet = create_app(settings)
    assert not any(quiet._telemetry[part] for part in ("tracing", "metrics", "logs"))
    traced = create_app(settings.with_(opentelemetry=True))
    assert all(traced._telemetry[part] for part in ("tracing", "metrics", "logs"))
