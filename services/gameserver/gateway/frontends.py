"""What a browser frontend needs around the game API (docs/http-api.md, "Browsers"):

- CORS for the origins of the settings' ``cors_origins`` (``RENATURE_CORS_ORIGINS``,
  comma-separated; off when unset);
- gzip for answers over 1 KB (an event stream is never compressed: it must flow);
- ``ETag`` on the views and events of finished games (they never change again), with
  ``If-None-Match`` answered 304;
- Swagger UI (``/docs``) and ReDoc (``/redoc``) served from the assets fastapi-offline ships,
  so the docs work without a CDN;
- security headers on every answer (`SecurityHeaders`): a Content-Security-Policy that allows
  nothing but the gateway's own scripts, styles and connections and no framing
  (``frame-ancestors 'none'``, and ``X-Frame-Options: DENY`` for older browsers),
  ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: no-referrer``: the table cannot be
  framed or fed a script while a seat token sits in the browser's storage. The docs pages
  allow their one inline script by its hash.

``gateway.wiring`` puts all of it into the app (its middleware and the docs pages), beside the
routes for browsers (the lobby, Server-Sent Events, the boards).
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gameserver.gateway.http_errors import error_body

GZIP_MIN_BYTES = 1000
DOCS_STATIC = "/static-offline-docs"
EXPOSED_HEADERS = ["Location", "ETag", "X-Model-Version", "Retry-After"]
ALLOWED_HEADERS = ["Authorization", "Content-Type", "Idempotency-Key", "Last-Event-ID"]


class JsonCors(CORSMiddleware):
    """CORS whose refused preflight answers the error shape (JSON with a ``code``), as every
    other refusal does, instead of Starlette's plain text."""

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code < 400:
            return response
        refused = bytes(response.body).decode()  # "Disallowed CORS origin, method, headers"
        headers = {
            k: v for k, v in response.headers.items() if k.lower().startswith(("access-", "vary"))
        }
        message = f"{refused.replace('Disallowed CORS', 'This cross-origin request is refused:')}"
        body = error_body("cors_refused", message + " (see docs/http-api.md, Browsers).")
        return JSONResponse(body, status_code=response.status_code, headers=headers)


REDOC_LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"
"""The one address ReDoc's script fetches by itself (its sidebar's "API docs by Redocly")."""
BLANK_IMAGE = b"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"


def offline_docs(app: FastAPI) -> None:
    """Replace FastAPI's CDN-backed /docs and /redoc by pages on fastapi-offline's assets."""
    replaced = {"/docs", "/redoc", app.swagger_ui_oauth2_redirect_url}
    routes: list[BaseRoute] = [
        route
        for route in app.router.routes
        if not (isinstance(route, Route) and route.path in replaced)
    ]
    app.router.routes[:] = routes
    static = Path(fastapi_offline.__file__).parent / "static"
    redoc_js = (static / "redoc.standalone.js").read_bytes().replace(REDOC_LOGO, BLANK_IMAGE)

    @app.get(f"{DOCS_STATIC}/redoc.standalone.js", include_in_schema=False)
    async def redoc_script() -> Response:  # before the mount: this copy fetches no logo
        return Response(redoc_js, media_type="text/javascript")

    app.mount(DOCS_STATIC, StaticFiles(directory=static), name="static-offline-docs")
    openapi_url = app.openapi_url or "/openapi.json"
    redirect = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return with_inline_hashes(
            get_swagger_ui_html(
                openapi_url=f"{root}{openapi_url}",
                title=f"{app.title} - Swagger UI",
                oauth2_redirect_url=redirect,
                swagger_js_url=f"{root}{DOCS_STATIC}/swagger-ui-bundle.js",
                swagger_css_url=f"{root}{DOCS_STATIC}/swagger-ui.css",
                swagger_favicon_url=f"{root}{DOCS_STATIC}/favicon.png",
            )
        )

    @app.get(redirect, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return with_inline_hashes(
            get_redoc_html(
                openapi_url=f"{root}{openapi_url}",
                title=f"{app.title} - ReDoc",
                redoc_js_url=f"{root}{DOCS_STATIC}/redoc.standalone.js",
                redoc_favicon_url=f"{root}{DOCS_STATIC}/favicon.png",
                with_google_fonts=False,
            )
        )


PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
"""The Content-Security-Policy of every answer (the web client has no inline script)."""
SECURITY_HEADERS = (
    (b"content-security-policy", PAGE_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def with_inline_hashes(page: HTMLResponse) -> HTMLResponse:
    """``page`` with a policy that allows its own inline scripts by their SHA-256 (the docs
    pages' set-up scripts) and inline styles (Swagger UI and ReDoc set them at run time)."""
    text = bytes(page.body).decode()
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"
        for script in _INLINE_SCRIPT.findall(text)
    )
    policy = PAGE_POLICY.replace("script-src 'self'", f"script-src 'self' {hashes}".rstrip())
    policy = policy.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
    page.headers["content-security-policy"] = policy
    return page


class SecurityHeaders:
    """The headers of `SECURITY_HEADERS` on every HTTP answer that does not set its own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, secured)


class AllowHeader:
    """A 405's ``Allow`` names every method the path takes. FastAPI makes one route per
    method set, and Starlette's 405 lists only the methods of the first route whose path
    matches (``POST`` for ``/games``, which ``GET`` serves too). The methods are read from the
    app's OpenAPI document, which lists every operation of a path together."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._paths: list[tuple[re.Pattern[str], set[str]]] | None = None

    def methods(self, app: FastAPI, path: str) -> set[str]:
        if self._paths is None:
            self._paths = []
            for template, operations in app.openapi().get("paths", {}).items():
                regex = re.sub(r"\\{[^/]+?\\}", "[^/]+", re.escape(template))
                methods = {method.upper() for method in operations}
                if "GET" in methods:
                    methods.add("HEAD")
                self._paths.append((re.compile(f"^{regex}$"), methods))
        found: set[str] = set()
        for pattern, methods in self._paths:
            if pattern.match(path):
                found |= methods
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def amend(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 405:
                methods = self.methods(scope["app"], scope["path"])
                if methods:
                    headers = [(k, v) for k, v in message["headers"] if k.lower() != b"allow"]
                    headers.append((b"allow", ", ".join(sorted(methods)).encode()))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, amend)


FINISHED_READS = re.compile(r"^/games/(?P<game>[^/]+)/(view|spectator|events)$")


class FinishedGameETags:
    """``ETag`` (a digest of the body) on ``GET`` views and events of a finished game, and 304
    for a matching ``If-None-Match``. A running game's answers carry none: they change with
    every move. The body depends on the caller's token, so the digest does too."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = None
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            match = FINISHED_READS.match(scope["path"])
        if match is None:
            await self.app(scope, receive, send)
            return
        started: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                started.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, capture)
        body = b"".join(chunks)
        headers = list(started.get("headers", []))
        status = started.get("status", 500)
        if status == 200 and await _finished(scope, match.group("game")):
            tag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
            headers.append((b"etag", tag.encode()))
            headers.append((b"cache-control", b"private, max-age=3600"))
            headers.append((b"vary", b"Authorization"))
            if tag in _if_none_match(scope):
                headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
                await send({"type": "http.response.start", "status": 304, "headers": headers})
                await send({"type": "http.response.body", "body": b""})
                return
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def _finished(scope: Scope, game_id: str) -> bool:
    gateway = scope["app"].state.gateway
    try:
        state = await gateway.games.state(game_id)
    except Exception:
        return False
    return bool(state.is_over)


def _if_none_match(scope: Scope) -> list[str]:
    for key, value in scope.get("headers", []):
        if key == b"if-none-match":
            return [tag.strip().removeprefix("W/") for tag in value.decode().split(",")]
    return []
