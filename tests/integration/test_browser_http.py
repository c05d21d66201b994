"""What a browser app needs from the gateway, against a real Redis and the real rules service:
CORS for configured origins only, gzip, ETags on finished games, the board geometry, offline
API docs, and errors as the documentation says (400 for a body that is not JSON, 405)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis

from gameplatform import game_names
from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from renature.board import BOARD_IDS, board_json, load_board
from support.gateway import gateway_settings

pytestmark = pytest.mark.redis

ORIGIN = "https://play.example"


@pytest.fixture
async def http(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    origins = {"RENATURE_CORS_ORIGINS": f"{ORIGIN}, https://other.example/"}
    frontends = Settings.from_env(origins).frontends
    app = create_app(gateway_settings(redis_url, frontends=frontends), command_timeout=5.0)
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-browser")),
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gateway", transport=httpx.ASGITransport(app)) as http,
    ):
        yield http


async def finished_game(http: httpx.AsyncClient) -> tuple[str, list[str]]:
    """A 2-player game ended at once by a resignation."""
    created = (await http.post("/games", json={"players": 2})).json()
    game_id = created["game_id"]
    tokens = [
        (await http.post(f"/games/{game_id}/seats/{s}", json={"name": f"p{s}"})).json()["token"]
        for s in range(2)
    ]
    await http.post(
        f"/games/{game_id}/start", headers={"Authorization": f"Bearer {created['host_token']}"}
    )
    resigned = await http.post(
        f"/games/{game_id}/resign", headers={"Authorization": f"Bearer {tokens[1]}"}
    )
    assert resigned.status_code == 200, resigned.text
    assert (await http.get(f"/games/{game_id}")).json()["phase"] == "finished"
    return game_id, tokens


async def test_cors_preflight_for_configured_origins_only(http: httpx.AsyncClient) -> None:
    ask = {
        "Origin": ORIGIN,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
    }
    preflight = await http.options("/games/x/commands", headers=ask)
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == ORIGIN
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
    created = await http.post("/games", json={"players": 2}, headers={"Origin": ORIGIN})
    assert created.headers["access-control-allow-origin"] == ORIGIN
    assert "Location" in created.headers["access-control-expose-headers"]
    stranger = await http.options("/games", headers={**ask, "Origin": "https://evil.example"})
    assert stranger.status_code == 400
    assert "access-control-allow-origin" not in stranger.headers
    assert stranger.headers["content-type"] == "application/json"  # the error shape, as always
    assert stranger.json()["error"]["code"] == "cors_refused"
    assert "origin" in stranger.json()["error"]["message"]
    odd = await http.options("/games", headers={**ask, "Access-Control-Request-Method": "PUT"})
    assert odd.status_code == 400
    assert odd.json()["error"]["code"] == "cors_refused"


async def test_cors_is_off_unless_configured(redis: aioredis.Redis, redis_url: str) -> None:
    app = create_app(gateway_settings(redis_url))
    async with httpx.AsyncClient(base_url="http://g", transport=httpx.ASGITransport(app)) as h:
        answer = await h.get("/boards", headers={"Origin": ORIGIN})
        assert answer.status_code == 200
        assert "access-control-allow-origin" not in answer.headers


async def test_gzip_and_etags_on_a_finished_game(http: httpx.AsyncClient) -> None:
    game_id, tokens = await finished_game(http)
    events = await http.get(f"/games/{game_id}/events", headers={"Accept-Encoding": "gzip"})
    assert events.headers["content-encoding"] == "gzip"
    seat = {"Authorization": f"Bearer {tokens[0]}"}
    for url, headers in ((f"/games/{game_id}/view", seat), (f"/games/{game_id}/spectator", {})):
        first = await http.get(url, headers=headers)
        tag = first.headers["etag"]
        again = await http.get(url, headers={**headers, "If-None-Match": tag})
        assert again.status_code == 304
        assert again.content == b""
        changed = await http.get(url, headers={**headers, "If-None-Match": '"other"'})
        assert changed.status_code == 200
        assert changed.json() == first.json()
    other = await http.get(
        f"/games/{game_id}/view", headers={"Authorization": f"Bearer {tokens[1]}"}
    )
    assert (
        other.headers["etag"]
        != (await http.get(f"/games/{game_id}/view", headers=seat)).headers["etag"]
    )


async def test_no_etag_while_the_game_runs(http: httpx.AsyncClient) -> None:
    created = (await http.post("/games", json={"players": 2})).json()
    spectator = await http.get(f"/games/{created['game_id']}/spectator")
    assert spectator.status_code == 200
    assert "etag" not in spectator.headers


async def test_boards_give_the_geometry_a_client_draws(http: httpx.AsyncClient) -> None:
    listed = (await http.get("/boards", params={"game": "renature"})).json()
    assert [b["id"] for b in listed] == list(BOARD_IDS)
    assert all(b["geometry"] and b["game"] == "renature" for b in listed)
    every = (await http.get("/boards")).json()  # every game's boards, geometry or not
    assert {b["game"] for b in every} == set(game_names())
    assert (await http.get("/boards", params={"game": "chess"})).status_code == 422
    for board_id in BOARD_IDS:
        answer = await http.get(f"/boards/{board_id}")
        assert answer.status_code == 200
        expected = json.loads(msgspec.json.encode(board_json(load_board(board_id))))
        assert answer.json() == expected
        assert answer.headers["cache-control"].startswith("public")
    missing = await http.get("/boards/moon")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "board_not_found"


async def test_api_docs_are_served_from_local_assets(http: httpx.AsyncClient) -> None:
    for page, asset in (("/docs", "swagger-ui-bundle.js"), ("/redoc", "redoc.standalone.js")):
        html = (await http.get(page)).text
        assert f"/static-offline-docs/{asset}" in html
        assert "cdn.jsdelivr" not in html
        served = await http.get(f"/static-offline-docs/{asset}")
        assert served.status_code == 200
        assert len(served.content) > 10_000
        assert b"cdn." not in served.content  # nothing fetched from elsewhere (ReDoc's logo)


async def test_errors_as_documented(http: httpx.AsyncClient) -> None:
    bad = await http.post("/games", content=b"{nope", headers={"Content-Type": "application/json"})
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "malformed_request"
    wrong_method = await http.put("/games")
    assert wrong_method.status_code == 405
    assert wrong_method.json()["error"]["code"] == "method_not_allowed"
    assert wrong_method.headers["allow"] == "GET, HEAD, POST"  # both routes of /games
    seat = await http.put("/games/x/seats/0")
    assert seat.headers["allow"] == "DELETE, POST"
