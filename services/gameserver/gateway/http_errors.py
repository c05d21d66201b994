"""One error shape for every failure: ``{"error": {"code", "message"}}`` with a fitting status.

Frontends branch on ``code`` (stable, machine-readable) and show ``message`` (a sentence a
player can act on). FastAPI's own validation and HTTP errors are rewritten into the same shape so
a client never has to parse two formats.

A use case refuses with a `Refusal` of some kind (``gateway.use_cases.refusals``), which knows
no HTTP; `STATUS` gives each kind its status, and `ApiError` is a refusal that carries its status
itself (what the HTTP layer and its adapters raise).

`bounded` shortens text taken from a request before it goes into an error message or a log
line, so no answer grows with what a client sent.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from redis import exceptions as redis_errors
from starlette.exceptions import HTTPException as StarletteHTTPException

from eventstore import StoreUnavailableError
from gameplatform.interface import JsonValue
from gameserver.gateway.use_cases.refusals import REJECTION_KINDS, Kind, Refusal
from gameserver.runtime.logging import get_logger

log = get_logger("renature.gateway")

MAX_MESSAGE = 400
"""The longest error message (no answer grows with the input it refuses)."""
MAX_ECHO = 120
"""The most characters of a client's input an error message repeats."""

STATUS: dict[Kind, int] = {
    "malformed": 400,
    "unauthenticated": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "invalid": 422,
    "limited": 429,
    "failed": 500,
    "unavailable": 503,
    "timeout": 504,
}
"""The HTTP status of each kind of refusal (`gameserver.gateway.use_cases.refusals`)."""
KIND = {status: kind for kind, status in STATUS.items()}

# Statuses of rejection codes that do not mean "the rules refuse this now" (409): malformed
# commands, a seat mismatch the rules service caught, and the service's own failures.
REJECTION_STATUS = {code: STATUS[kind] for code, kind in REJECTION_KINDS.items()}


RETRY_AFTER = {"Retry-After": "1"}
"""Sent with every 503: the outage is transient (Redis restarting, an instance taking over), and
services reconnect within a second of Redis answering again."""


def bounded(text: str, limit: int = MAX_ECHO) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


class ApiError(Refusal):
    """A failure to report to the client as ``status`` + ``{"error": {code, message}}``: a
    `Refusal` of the kind its status stands for (``failed`` for a status of none)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(KIND.get(status, "failed"), code, message)
        self.status = status


def api_error(refusal: Refusal) -> ApiError:
    """A use case's refusal as the answer it gets (an `ApiError` stays itself)."""
    if isinstance(refusal, ApiError):
        return refusal
    return ApiError(STATUS[refusal.kind], refusal.code, refusal.message)


def error_body(code: str, message: str) -> dict[str, JsonValue]:
    """The common error shape; the message is cut short (it may quote what a client sent)."""
    return {"error": {"code": code, "message": bounded(message, MAX_MESSAGE)}}


def rule_error_status(code: str | None) -> int:
    """The HTTP status of a command the rules service rejected with ``code``: 409 for every
    rule the command breaks now (``not_your_turn``, ``illegal_placement``, ...)."""
    return REJECTION_STATUS.get(code or "", 409)


def _describe_validation(error: RequestValidationError) -> str:
    """A short readable summary of pydantic's error list (location: message; ...)."""
    parts = []
    for item in error.errors()[:5]:
        location = ".".join(str(p) for p in item.get("loc", ()) if p != "body") or "body"
        parts.append(f"{location}: {item.get('msg', 'invalid')}")
    return "; ".join(parts) or "The request is malformed."


def install_error_handlers(app: FastAPI) -> None:
    """Route every error through the common shape."""

    async def on_api_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, Refusal)
        exc = api_error(exc)
        headers = RETRY_AFTER if exc.status == 503 else None
        return JSONResponse(
            error_body(exc.code, exc.message), status_code=exc.status, headers=headers
        )

    async def on_validation(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        # A body that is not JSON at all is a 400 (docs/http-api.md); one that does not fit
        # the schema, a 422.
        if any(item.get("type") == "json_invalid" for item in exc.errors()):
            body = error_body("malformed_request", "The body is not valid JSON.")
            return JSONResponse(body, status_code=400)
        return JSONResponse(
            error_body("malformed_request", _describe_validation(exc)), status_code=422
        )

    async def on_http(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = {400: "malformed_request", 404: "not_found", 405: "method_not_allowed"}.get(
            exc.status_code, "http_error"
        )
        return JSONResponse(
            error_body(code, str(exc.detail)),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    async def on_redis_down(_: Request, exc: Exception) -> JSONResponse:
        log.error("gateway_redis_unavailable", error=str(exc) or repr(exc))
        body = error_body("store_unavailable", "The game store cannot be reached; retry.")
        return JSONResponse(body, status_code=503, headers=RETRY_AFTER)

    async def on_unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.error("gateway_internal_error", error=type(exc).__name__, exc_info=exc)
        body = error_body("internal_error", "The gateway failed; please retry.")
        return JSONResponse(body, status_code=500)

    app.add_exception_handler(Refusal, on_api_error)  # an ApiError too, with its status
    app.add_exception_handler(StoreUnavailableError, on_redis_down)
    app.add_exception_handler(redis_errors.ConnectionError, on_redis_down)
    app.add_exception_handler(redis_errors.TimeoutError, on_redis_down)
    app.add_exception_handler(Exception, on_unexpected)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
