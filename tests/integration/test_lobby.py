"""The lobby, the host and the seats against a real Redis and the real rules service: listing
with filters and cursors, host tokens, invitations, leaving, removing, cancelling, resigning,
time controls, and every refusal with its status and code (nothing appended for any)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from eventstore import RedisEventStore
from gameplatform import game_names
from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from support.gateway import gateway_settings

pytestmark = pytest.mark.redis


@dataclass
class Stack:
    http: httpx.AsyncClient
    store: RedisEventStore


@pytest.fixture
async def stack(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Stack]:
    app = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    transport = httpx.ASGITransport(app=app)
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-lobby")),
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as http,
    ):
        yield Stack(http, RedisEventStore(redis))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def refused(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code, response.text


async def create(stack: Stack, **body: Any) -> dict[str, Any]:
    response = await stack.http.post("/games", json={"players": 2, **body})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    assert response.headers["location"] == f"/games/{created['game_id']}"
    return created


async def join(stack: Stack, game_id: str, seat: int, **extra: Any) -> str:
    response = await stack.http.post(
        f"/games/{game_id}/seats/{seat}", json={"name": f"p{seat}", **extra}
    )
    assert response.status_code == 201, response.text
    token: str = response.json()["token"]
    return token


async def test_the_creator_is_host_and_the_summary_names_seats(stack: Stack) -> None:
    created = await create(stack)
    game_id = created["game_id"]
    assert created["host_token"]
    assert created["invite_code"] is None
    await join(stack, game_id, 1)
    summary = (await stack.http.get(f"/games/{game_id}")).json()
    assert summary["seats"] == [
        {"seat": 0, "colour": "black", "name": None, "status": "playing"},
        {"seat": 1, "colour": "white", "name": "p1", "status": "playing"},
    ]
    assert summary["open_seats"] == [0]
    assert summary["seating"] == "open"
    assert summary["clock"] is None
    host = bearer(created["host_token"])
    refused(await stack.http.post(f"/games/{game_id}/start", headers=host), 409, "wrong_phase")
    await join(stack, game_id, 0)
    started = await stack.http.post(f"/games/{game_id}/start", headers=host)
    assert started.status_code == 200, started.text


async def test_invitation_seats(stack: Stack) -> None:
    created = await create(stack, seating="invite")
    game_id, code = created["game_id"], created["invite_code"]
    assert code
    url = f"/games/{game_id}/seats/0"
    refused(await stack.http.post(url, json={"name": "x"}), 403, "invitation_required")
    wrong = {"name": "x", "invite": "not-the-code"}
    refused(await stack.http.post(url, json=wrong), 403, "invalid_invitation")
    assert await stack.store.version(game_id) == 1
    await join(stack, game_id, 0, invite=code)
    listed = (await stack.http.get("/games")).json()["games"]
    assert listed[0]["seating"] == "invite"


async def test_host_cancels_and_every_refusal(stack: Stack) -> None:
    created = await create(stack)
    game_id = created["game_id"]
    seat0 = await join(stack, game_id, 0)
    url = f"/games/{game_id}/cancel"
    refused(await stack.http.post(url), 401, "missing_token")
    refused(await stack.http.post(url, headers=bearer(seat0)), 403, "not_host")
    refused(await stack.http.post(url, headers=bearer("forged")), 403, "not_host")
    refused(await stack.http.post(f"/games/{'0' * 32}/cancel"), 404, "game_not_found")
    assert await stack.store.version(game_id) == 2
    host = bearer(created["host_token"])
    assert (await stack.http.post(url, headers=host)).status_code == 200
    refused(await stack.http.post(url, headers=host), 409, "game_over")
    late = await stack.http.post(f"/games/{game_id}/seats/1", json={"name": "late"})
    refused(late, 409, "wrong_phase")
    assert (await stack.http.get(f"/games/{game_id}")).json()["phase"] == "cancelled"

    other = await create(stack)
    await join(stack, other["game_id"], 0)
    await join(stack, other["game_id"], 1)
    other_host = bearer(other["host_token"])
    await stack.http.post(f"/games/{other['game_id']}/start", headers=other_host)
    cancel = await stack.http.post(f"/games/{other['game_id']}/cancel", headers=other_host)
    refused(cancel, 409, "wrong_phase")
    refused(await stack.http.post(url, headers=other_host), 403, "not_host")  # not its host


async def test_leaving_and_removing_before_the_start(stack: Stack) -> None:
    created = await create(stack, players=3)
    game_id, host = created["game_id"], bearer(created["host_token"])
    tokens = [await join(stack, game_id, seat) for seat in range(3)]
    seat = f"/games/{game_id}/seats"
    refused(await stack.http.delete(f"{seat}/1"), 401, "missing_token")
    refused(await stack.http.delete(f"{seat}/1", headers=bearer(tokens[0])), 403, "not_your_seat")
    refused(await stack.http.delete(f"{seat}/1", headers=bearer("forged")), 403, "invalid_token")
    refused(await stack.http.delete(f"{seat}/9", headers=host), 422, "malformed_request")
    before = await stack.store.version(game_id)
    assert (await stack.http.delete(f"{seat}/1", headers=bearer(tokens[1]))).status_code == 200
    assert (await stack.http.delete(f"{seat}/2", headers=host)).status_code == 200
    assert await stack.store.version(game_id) == before + 2
    refused(await stack.http.delete(f"{seat}/2", headers=host), 422, "invalid_command")
    refused(
        await stack.http.get(f"/games/{game_id}/view", headers=bearer(tokens[1])),
        403,
        "invalid_token",
    )
    summary = (await stack.http.get(f"/games/{game_id}")).json()
    assert summary["open_seats"] == [1, 2]
    events = (await stack.http.get(f"/games/{game_id}/events", params={"after": before})).json()
    assert [(e["type"], e["reason"]) for e in events] == [
        ("PlayerLeft", "left"),
        ("PlayerLeft", "removed"),
    ]
    tokens[1] = await join(stack, game_id, 1)  # the seat is free again
    tokens[2] = await join(stack, game_id, 2)
    assert (await stack.http.post(f"/games/{game_id}/start", headers=host)).status_code == 200
    refused(await stack.http.delete(f"{seat}/1", headers=host), 409, "wrong_phase")
    refused(await stack.http.delete(f"{seat}/0", headers=bearer(tokens[0])), 409, "wrong_phase")


async def test_resigning(stack: Stack) -> None:
    created = await create(stack, players=3)
    game_id, host = created["game_id"], bearer(created["host_token"])
    tokens = [await join(stack, game_id, seat) for seat in range(3)]
    url = f"/games/{game_id}/resign"
    refused(await stack.http.post(url, headers=bearer(tokens[1])), 409, "wrong_phase")
    refused(await stack.http.post(url), 401, "missing_token")
    refused(await stack.http.post(url, headers=host), 403, "invalid_token")  # host is no seat
    await stack.http.post(f"/games/{game_id}/start", headers=host)
    assert (await stack.http.post(url, headers=bearer(tokens[1]))).status_code == 200
    refused(await stack.http.post(url, headers=bearer(tokens[1])), 409, "wrong_phase")
    view = (await stack.http.get(f"/games/{game_id}/view", headers=bearer(tokens[0]))).json()
    assert [s["status"] for s in view["seats"]] == ["playing", "resigned", "playing"]
    assert view["seats"][1]["hand_count"] == 0
    assert (await stack.http.post(url, headers=bearer(tokens[0]))).status_code == 200
    assert (await stack.http.get(f"/games/{game_id}")).json()["phase"] == "finished"
    refused(await stack.http.post(url, headers=bearer(tokens[2])), 409, "game_over")


async def test_time_controls_at_creation(stack: Stack) -> None:
    # Both kinds at once, neither, an increment with a time per turn, a boolean: the document
    # itself rules them out (one of two exact shapes), so they are malformed requests.
    bads: tuple[dict[str, Any], ...] = (
        {"per_turn": 30, "total": 60},
        {},
        {"per_turn": 30, "increment": 5},
        {"total": True},
    )
    for bad in bads:
        response = await stack.http.post("/games", json={"players": 2, "time_control": bad})
        refused(response, 422, "malformed_request")
    refused(
        await stack.http.post("/games", json={"players": 2, "time_control": {"per_turn": 0}}),
        422,
        "malformed_request",
    )
    created = await create(stack, time_control={"total": 300, "increment": 5})
    game_id = created["game_id"]
    tokens = [await join(stack, game_id, seat) for seat in range(2)]
    await stack.http.post(f"/games/{game_id}/start", headers=bearer(created["host_token"]))
    clock = (await stack.http.get(f"/games/{game_id}")).json()["clock"]
    assert clock["total"] == 300
    assert clock["running_for"] == 0
    assert clock["remaining_ms"] == [300_000, 300_000]
    assert clock["deadline"].endswith("Z")
    view = (await stack.http.get(f"/games/{game_id}/view", headers=bearer(tokens[1]))).json()
    assert view["clock"]["deadline"] == clock["deadline"]


async def test_idempotent_creation_gives_the_same_host_token(stack: Stack) -> None:
    key = {"Idempotency-Key": "lobby-test-key-0123456789"}
    body = {"players": 2, "seating": "invite"}
    first = await stack.http.post("/games", json=body, headers=key)
    again = await stack.http.post("/games", json=body, headers=key)
    assert first.status_code == again.status_code == 201, again.text
    for field in ("game_id", "host_token", "invite_code"):
        assert first.json()[field] == again.json()[field]
    assert len((await stack.http.get("/games")).json()["games"]) == 1


async def test_listing_filters_and_pages(stack: Stack) -> None:
    made = []
    for players, board in ((2, "base"), (3, "base"), (2, "valley"), (4, "base"), (2, "base")):
        made.append((await create(stack, players=players, board=board))["game_id"])
    for seat in range(2):
        await join(stack, made[4], seat)  # full lobby
    for seat in range(2):
        await join(stack, made[0], seat)
    first = (await create(stack))["host_token"]  # one more, cancelled
    cancelled = (await stack.http.get("/games", params={"limit": 1})).json()["games"][0]
    await stack.http.post(f"/games/{cancelled['game_id']}/cancel", headers=bearer(first))
    host0 = (await stack.http.get("/games")).json()
    assert len(host0["games"]) == 6
    assert host0["next_cursor"] is None

    async def ids(**params: Any) -> list[str]:
        response = await stack.http.get("/games", params=params)
        assert response.status_code == 200, response.text
        return [g["game_id"] for g in response.json()["games"]]

    assert await ids() == [cancelled["game_id"], *reversed(made)]  # newest first
    assert await ids(players=3) == [made[1]]
    assert await ids(board="valley") == [made[2]]
    assert await ids(board="standard") == []  # another hosted game's board: none of these
    assert await ids(phase="cancelled") == [cancelled["game_id"]]
    assert await ids(open_seats="true") == [made[3], made[2], made[1]]
    assert await ids(open_seats="false", phase="lobby") == [made[4], made[0]]
    assert await ids(phase="playing") == []
    paged: list[str] = []
    cursor = None
    for _ in range(10):
        params: dict[str, Any] = {"limit": 2}
        if cursor:
            params["cursor"] = cursor
        page = (await stack.http.get("/games", params=params)).json()
        paged += [g["game_id"] for g in page["games"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert paged == await ids()
    filtered = (await stack.http.get("/games", params={"limit": 1, "players": 2})).json()
    more = await ids(limit=5, players=2, cursor=filtered["next_cursor"])
    assert [g["game_id"] for g in filtered["games"]] + more == await ids(players=2)
    stray = await stack.http.get("/games", params={"cursor": "nonsense"})  # still a position
    assert stray.status_code == 200
    bad_filters = ({"phase": "dancing"}, {"board": "moon"}, {"limit": 0}, {"players": 5})
    for bad in (*bad_filters, {"limit": 101}):
        refused(await stack.http.get("/games", params=bad), 422, "malformed_request")


async def redis_contents(redis: aioredis.Redis) -> dict[bytes, bytes | None]:
    """Every key of the server's Redis with its serialized value (what a refusal must leave)."""
    return {key: await redis.dump(key) async for key in redis.scan_iter(count=1000)}


REFUSED_CREATIONS: list[tuple[dict[str, Any], int, str, tuple[str, ...]]] = [
    # (body, status, code, words the message must name)
    ({"players": 2, "seatting": "invite"}, 422, "malformed_request", ("seatting", "renature")),
    ({"players": 2, "timecontrol": {"per_turn": 30}}, 422, "malformed_request", ("timecontrol",)),
    ({"game": "chess", "players": 2}, 422, "unknown_game", ("chess", *game_names())),
    ({"game": 7}, 422, "unknown_game", (*game_names(),)),
    ({"game": "renature", "players": 2, "sets": 3}, 422, "malformed_request", ("sets", "renature")),
    (
        {"game": "renaissance", "time_control": {"per_turn": 30}},
        422,
        "malformed_request",
        ("on_timeout", "renaissance"),
    ),
    ({"game": "renaissance", "competition": "foo"}, 422, "malformed_request", ("competition",)),
    ({"game": "renaissance", "board": "valley"}, 422, "malformed_request", ("board",)),
    ({"game": "renaissance", "players": 3}, 422, "malformed_request", ("players",)),
    ({"game": "renaissance", "sets": 0}, 422, "malformed_request", ("sets",)),
    ({"players": 5}, 422, "malformed_request", ("players",)),
    ({"board": "base"}, 422, "malformed_request", ("players",)),
    ({"players": 2, "seed": ""}, 422, "malformed_request", ("seed",)),
]


async def test_a_creation_refuses_what_it_does_not_understand(
    stack: Stack, redis: aioredis.Redis
) -> None:
    # Unknown fields, unknown games, options a game does not take, values out of a game's
    # range: each a 422 that names the field (and the game, or the games hosted), and none
    # leaves a trace in Redis (no game, no lobby entry, no seed, no host token).
    await create(stack)  # a server with a game on it already
    before = await redis_contents(redis)
    for body, status, code, words in REFUSED_CREATIONS:
        response = await stack.http.post("/games", json=body)
        refused(response, status, code)
        message = response.json()["error"]["message"]
        for word in words:
            assert word in message, (body, message)
    assert await redis_contents(redis) == before


async def test_each_game_is_created_with_its_own_options(stack: Stack) -> None:
    created = await create(stack, game="renaissance", sets=2, competition="sets")
    assert (created["game"], created["board"], created["players"]) == ("renaissance", "standard", 2)
    first = (await stack.store.read(created["game_id"], after_version=0, limit=1))[0]
    assert first.meta is not None
    command = json.loads(first.meta)["command"]
    assert (command["sets"], command["competition"]) == (2, "sets")
    left_out = await stack.http.post("/games", json={"game": "renaissance"})  # one count: 2
    assert left_out.status_code == 201, left_out.text
    listed = await stack.http.get("/games", params={"game": "renaissance", "phase": "lobby"})
    assert {game["game"] for game in listed.json()["games"]} == {"renaissance"}
    assert len(listed.json()["games"]) == 2
    refused(await stack.http.get("/games", params={"game": "chess"}), 422, "malformed_request")
    refused(await stack.http.get("/games", params={"phase": "over"}), 422, "malformed_request")


async def test_a_renaissance_seat_resigns_and_the_other_wins(stack: Stack) -> None:
    # The lobby's seat routes serve every game: leave, remove and cancel before the start,
    # resign after it; each is the game's own command, decided by its core.
    lobby = await create(stack, game="renaissance")
    game_id, host = lobby["game_id"], bearer(lobby["host_token"])
    tokens = [await join(stack, game_id, seat) for seat in range(2)]
    seats = f"/games/{game_id}/seats"
    assert (await stack.http.delete(f"{seats}/0", headers=bearer(tokens[0]))).status_code == 200
    assert (await stack.http.delete(f"{seats}/1", headers=host)).status_code == 200
    assert (await stack.http.get(f"/games/{game_id}")).json()["open_seats"] == [0, 1]
    assert (await stack.http.post(f"/games/{game_id}/cancel", headers=host)).status_code == 200
    assert (await stack.http.get(f"/games/{game_id}")).json()["phase"] == "cancelled"
    refused(await stack.http.post(f"/games/{game_id}/cancel", headers=host), 409, "game_over")

    played = await create(stack, game="renaissance")
    game_id, host = played["game_id"], bearer(played["host_token"])
    tokens = [await join(stack, game_id, seat) for seat in range(2)]
    url = f"/games/{game_id}/resign"
    refused(await stack.http.post(url, headers=bearer(tokens[0])), 409, "wrong_phase")
    assert (await stack.http.post(f"/games/{game_id}/start", headers=host)).status_code == 200
    refused(await stack.http.post(f"/games/{game_id}/cancel", headers=host), 409, "wrong_phase")
    assert (await stack.http.post(url, headers=bearer(tokens[1]))).status_code == 200
    summary = (await stack.http.get(f"/games/{game_id}")).json()
    assert summary["phase"] == "finished"
    assert [seat["status"] for seat in summary["seats"]] == ["playing", "resigned"]
    events = (await stack.http.get(f"/games/{game_id}/events")).json()
    assert [event["type"] for event in events[-2:]] == ["SeatResigned", "GameEnded"]
    assert events[-1]["winners"] == [0]
    refused(await stack.http.post(url, headers=bearer(tokens[0])), 409, "game_over")
    audit = (await stack.http.get(f"/games/{game_id}/audit")).json()
    assert audit["ok"]
    assert audit["winners"] == [0]
