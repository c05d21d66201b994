"""A small typed client for the gateway's HTTP API (docs/http-api.md).

Used by ``renature bots play`` and the tests: it speaks to the gateway exactly as a frontend
would, and decodes answers into the rules core's types of the client's game (Renature's
``GameView``, ``GameState``, commands, events; Renaissance's) so callers work with the same
values as in-process code.
"""

from __future__ import annotations

import asyncio
import uuid
from types import TracebackType
from typing import Any

import httpx
import msgspec

from gameplatform import get_game
from gameplatform.chain import Event
from gameplatform.interface import HostedState, JsonValue
from gameplatform.registry import DEFAULT_GAME


class GatewayError(Exception):
    """The gateway answered with an error: ``status`` and the ``{"error": ...}`` body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class CommandResult(msgspec.Struct, frozen=True):
    """An accepted command: the game's version after it and the versions it appended."""

    game_id: str
    command_id: str
    version: int
    first_version: int
    last_version: int


class PoliteTransport(httpx.AsyncBaseTransport):
    """Waits out a 429 (its ``Retry-After``, at most ``max_wait`` seconds) and sends the request
    again, a few times: the gateway's rate limits slow a bot down, they do not break its game.
    Every request this client sends is safe to repeat (reads, and commands with their ids)."""

    def __init__(
        self, inner: httpx.AsyncBaseTransport, tries: int = 6, max_wait: float = 5.0
    ) -> None:
        self._inner = inner
        self._tries = tries
        self._max_wait = max_wait

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        for _ in range(self._tries - 1):
            response = await self._inner.handle_async_request(request)
            if response.status_code != 429:
                return response
            await response.aclose()
            try:
                wait = float(response.headers.get("Retry-After", "1"))
            except ValueError:
                wait = 1.0
            await asyncio.sleep(min(max(wait, 0.05), self._max_wait))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class GatewayClient:
    """Async client for one gateway. Pass ``transport`` (e.g. ``httpx.ASGITransport``) to talk
    to an app in process."""

    def __init__(
        self,
        base_url: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        game: str = DEFAULT_GAME,
    ) -> None:
        self.game = get_game(game)
        """The game this client creates and plays (`gameplatform.get_game`)."""
        self._commands = msgspec.json.Decoder(list[self.game.command_type])  # type: ignore[name-defined]
        self._events = msgspec.json.Decoder(list[self.game.event_type])  # type: ignore[name-defined]
        inner = transport if transport is not None else httpx.AsyncHTTPTransport()
        self._http = httpx.AsyncClient(
            base_url=base_url, transport=PoliteTransport(inner), timeout=timeout
        )

    async def __aenter__(self) -> GatewayClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- games ---------------------------------------------------------------------------------

    async def create_game(
        self,
        players: int,
        board: str | None = None,
        seed: str | None = None,
        options: dict[str, JsonValue] | None = None,
    ) -> str:
        """Create a game of the client's game; returns its id. ``seed`` only for tests, bots
        and tournaments (Renature); ``options`` are the game's (Renaissance: ``sets``,
        ``competition``)."""
        body: dict[str, JsonValue] = {"game": self.game.name, "players": players, **(options or {})}
        if board is not None:  # the game's first board otherwise (Renature: base)
            body["board"] = board
        if seed is not None:
            body["seed"] = seed
        return str(self._json(await self._http.post("/games", json=body))["game_id"])

    async def summary(self, game_id: str) -> dict[str, JsonValue]:
        """Public facts: phase, current seat, joined seats, version."""
        return dict(self._json(await self._http.get(f"/games/{game_id}")))

    async def join(self, game_id: str, seat: int, name: str) -> str:
        """Take ``seat``; returns the secret seat token."""
        response = await self._http.post(f"/games/{game_id}/seats/{seat}", json={"name": name})
        return str(self._json(response)["token"])

    async def start(self, game_id: str, token: str) -> CommandResult:
        response = await self._http.post(f"/games/{game_id}/start", headers=_auth(token))
        return msgspec.convert(self._json(response), CommandResult)

    async def send(
        self, game_id: str, token: str, command: msgspec.Struct, command_id: str | None = None
    ) -> CommandResult:
        """Play ``command`` for the token's seat; raises `GatewayError` when refused."""
        body = {
            "command_id": command_id or uuid.uuid4().hex,
            "command": msgspec.to_builtins(command),
        }
        response = await self._http.post(
            f"/games/{game_id}/commands", json=body, headers=_auth(token)
        )
        return msgspec.convert(self._json(response), CommandResult)

    # -- reading -------------------------------------------------------------------------------

    async def view(self, game_id: str, token: str | None = None) -> Any:
        """The seat's view with a token, else the spectator view (the game's ``view_type``:
        Any, so that a caller that knows its game reads its own view's fields)."""
        path = f"/games/{game_id}/view" if token else f"/games/{game_id}/spectator"
        response = await self._http.get(path, headers=_auth(token))
        self._check(response)
        return msgspec.json.decode(response.content, type=self.game.view_type)

    async def state(self, game_id: str, token: str) -> HostedState:
        """The seat's own-perspective state (secrets of others replaced by stand-ins)."""
        response = await self._http.get(f"/games/{game_id}/state", headers=_auth(token))
        self._check(response)
        return self.game.decode_state(response.content)

    async def legal_actions(self, game_id: str, token: str) -> list[msgspec.Struct]:
        response = await self._http.get(f"/games/{game_id}/legal-actions", headers=_auth(token))
        self._check(response)
        commands: list[msgspec.Struct] = self._commands.decode(response.content)
        return commands

    async def events(self, game_id: str, token: str | None = None, after: int = 0) -> list[Event]:
        """The events after ``after`` as the caller may see them."""
        response = await self._http.get(
            f"/games/{game_id}/events", params={"after": after}, headers=_auth(token)
        )
        self._check(response)
        events: list[Event] = self._events.decode(response.content)
        return events

    # -- helpers -------------------------------------------------------------------------------

    def _json(self, response: httpx.Response) -> JsonValue:
        self._check(response)
        return response.json()

    @staticmethod
    def _check(response: httpx.Response) -> None:
        if response.is_success:
            return
        try:
            error = response.json()["error"]
            code, message = str(error["code"]), str(error["message"])
        except (ValueError, KeyError, TypeError):
            code, message = "http_error", response.text[:200]
        raise GatewayError(response.status_code, code, message)


def _auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}
