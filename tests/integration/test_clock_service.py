"""The clock service against a real Redis and the real rules service: it claims a timeout once
a seat's time is up (and only then), the rules decide it from their recorded times, and the
deadlines survive a restart of the service because they live in Redis."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from gameplatform import get_game
from gameserver.gateway.app import create_app
from gameserver.gateway.live_commands import answer
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.bus import CommandEnvelope
from gameserver.runtime.rules_client import RulesClient
from gameserver.runtime.settings import Settings
from renature import commands as c
from support.clock import CLOCK_STREAMS, clock_service
from support.gateway import gateway_settings

pytestmark = pytest.mark.redis


@dataclass
class Stack:
    http: httpx.AsyncClient
    app: Any
    redis: aioredis.Redis


@pytest.fixture
async def stack(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Stack]:
    app = create_app(gateway_settings(redis_url), command_timeout=5.0)
    transport = httpx.ASGITransport(app=app)
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-clock")),
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as http,
    ):
        yield Stack(http, app, redis)


async def started(stack: Stack, time_control: dict[str, Any], **body: Any) -> tuple[str, list[str]]:
    body = {"players": 2, "time_control": time_control, **body}
    created = (await stack.http.post("/games", json=body)).json()
    game_id = created["game_id"]
    tokens = []
    for seat in range(2):
        joined = await stack.http.post(f"/games/{game_id}/seats/{seat}", json={"name": f"p{seat}"})
        tokens.append(joined.json()["token"])
    headers = {"Authorization": f"Bearer {created['host_token']}"}
    assert (await stack.http.post(f"/games/{game_id}/start", headers=headers)).status_code == 200
    return game_id, tokens


async def until(stack: Stack, game_id: str, check: Any, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        summary: dict[str, Any] = (await stack.http.get(f"/games/{game_id}")).json()
        if check(summary):
            return summary
        assert time.monotonic() < deadline, summary
        await asyncio.sleep(0.1)


async def test_an_absent_seat_is_removed_when_its_time_is_up(stack: Stack) -> None:
    game_id, _ = await started(stack, {"per_turn": 2, "on_timeout": "remove"})
    began = time.monotonic()
    async with clock_service(stack.redis, "clock-a") as service:
        summary = await until(stack, game_id, lambda s: s["phase"] == "finished", 10)
    assert time.monotonic() - began >= 1.5  # not before the deadline
    assert service.claims >= 1
    assert [s["status"] for s in summary["seats"]] == ["removed", "playing"]
    events = (await stack.http.get(f"/games/{game_id}/events", params={"after": 4})).json()
    kinds = [ev["type"] for ev in events]
    assert kinds[:3] == ["SeatTimedOut", "SeatResigned", "TurnEnded"]
    assert kinds[-1] == "GameEnded"
    assert events[-1]["winners"] == [1]
    report = (await stack.http.get(f"/games/{game_id}/audit")).json()
    assert report["ok"], report["first_bad"]  # the timeout is re-decided from recorded times
    assert await stack.redis.zscore(service.deadlines_key, game_id) is None


async def test_a_claim_before_the_deadline_is_refused(stack: Stack) -> None:
    game_id, _ = await started(stack, {"per_turn": 60})
    gateway = stack.app.state.gateway
    version = await gateway.store.version(game_id)
    async with RulesClient(stack.redis, streams=CLOCK_STREAMS) as clock:
        reply = await clock.send(CommandEnvelope(game_id, "early", c.ClaimTimeout(0), None))
    assert (reply.status, reply.code) == ("rejected", "clock_running")
    assert "left" in (reply.message or "")
    assert await gateway.store.version(game_id) == version


async def test_only_the_clock_claims_a_timeout_and_the_clock_claims_nothing_else(
    stack: Stack,
) -> None:
    """A leaked clock password acts for no seat: the rules service knows the sender from the
    stream (each ACL user writes only its own) and refuses what it may not send, storing
    nothing, not even the refusal."""
    game_id, _ = await started(stack, {"per_turn": 60})
    gateway = stack.app.state.gateway
    version = await gateway.store.version(game_id)
    forged = CommandEnvelope(game_id, "forged", c.DiscardDomino(seat=0, domino=0), seat=0)
    async with RulesClient(stack.redis, streams=CLOCK_STREAMS) as clock:
        reply = await clock.send(forged)
    assert (reply.status, reply.code) == ("rejected", "wrong_sender")
    claim = CommandEnvelope(game_id, "claim", c.ClaimTimeout(0), None)
    reply = await gateway.send(claim)  # nor does the gateway claim timeouts
    assert (reply.status, reply.code) == ("rejected", "wrong_sender")
    assert await gateway.store.version(game_id) == version
    for command_id in ("forged", "claim"):
        assert await gateway.store.get_outcome(game_id, command_id) is None


async def test_deadlines_survive_a_restart_of_the_clock_service(stack: Stack) -> None:
    game_id, _ = await started(stack, {"per_turn": 3, "on_timeout": "bot"})
    async with clock_service(stack.redis, "clock-a") as first:
        key = first.deadlines_key
        deadline = time.monotonic() + 5
        while await stack.redis.zscore(key, game_id) is None:
            assert time.monotonic() < deadline, "the deadline was never stored"
            await asyncio.sleep(0.05)
    assert first.claims == 0  # stopped before the deadline
    stored = await stack.redis.zscore(key, game_id)
    async with clock_service(stack.redis, "clock-b") as second:
        summary = await until(stack, game_id, lambda s: s["seats"][0]["status"] == "bot", 10)
        assert second.claims >= 1
    assert summary["current_seat"] == 1  # the bot played seat 0's turn at once
    assert summary["clock"]["running_for"] == 1
    assert await stack.redis.zscore(key, game_id) != stored  # seat 1's deadline now


async def test_a_renaissance_seat_whose_time_is_up_loses(stack: Stack) -> None:
    # The platform's clocks serve every game: the real clock service claims the timeout of a
    # Renaissance game, its core decides it (the seat loses) and its audit re-decides it.
    control = {"per_turn": 2, "on_timeout": "remove"}
    game_id, _ = await started(stack, control, game="renaissance")
    summary = (await stack.http.get(f"/games/{game_id}")).json()
    assert (summary["clock"]["per_turn"], summary["clock"]["running_for"]) == (2, 0)
    began = time.monotonic()
    async with clock_service(stack.redis, "clock-rn") as service:
        summary = await until(stack, game_id, lambda s: s["phase"] == "finished", 10)
    assert time.monotonic() - began >= 1.5  # not before the deadline
    assert service.claims >= 1
    assert [s["status"] for s in summary["seats"]] == ["removed", "playing"]
    events = (await stack.http.get(f"/games/{game_id}/events")).json()
    assert [ev["type"] for ev in events[-3:]] == ["SeatTimedOut", "SeatResigned", "GameEnded"]
    assert events[-1]["winners"] == [1]
    report = (await stack.http.get(f"/games/{game_id}/audit")).json()
    assert report["ok"], report["first_bad"]
    assert await stack.redis.zscore(service.deadlines_key, game_id) is None
    refused = await stack.http.post(
        "/games", json={"game": "renaissance", "time_control": {"per_turn": 2}}
    )
    assert refused.status_code == 422, refused.text  # no bot plays on: a timeout loses


# --- a timeout is not for ever: the seat taken back -------------------------------------------


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def first_timeout(stack: Stack, seat: int) -> None:
    """Run the clock service until ``seat`` times out (a bot plays it on), then stop it (so no
    other seat times out)."""
    async with clock_service(stack.redis, f"clock-{seat}") as service:
        deadline = time.monotonic() + 10
        while not service.claims:  # stopped at its first claim (the block waits for its reply)
            assert time.monotonic() < deadline, "no timeout was claimed"
            await asyncio.sleep(0.01)


async def timed_out(stack: Stack, game_id: str, seat: int) -> list[str]:
    """`first_timeout`, then the table's statuses."""
    await first_timeout(stack, seat)
    table = (await stack.http.get(f"/games/{game_id}/table")).json()
    statuses: list[str] = table["statuses"]
    return statuses


async def move(stack: Stack, game_id: str, token: str, command_id: str) -> httpx.Response:
    """The seat's first legal action, sent as a move (its seat filled in by the gateway)."""
    legal = (await stack.http.get(f"/games/{game_id}/legal-actions", headers=bearer(token))).json()
    command = legal[0] if legal else {"type": "EndTurn"}
    body = {"command_id": command_id, "command": command}
    return await stack.http.post(f"/games/{game_id}/commands", json=body, headers=bearer(token))


async def kinds_after(stack: Stack, game_id: str, version: int) -> list[str]:
    events = (await stack.http.get(f"/games/{game_id}/events", params={"after": version})).json()
    return [event["type"] for event in events]


async def test_a_timed_out_seat_is_taken_back_by_its_next_command(stack: Stack) -> None:
    game_id, tokens = await started(stack, {"per_turn": 1, "on_timeout": "bot"})
    gateway = stack.app.state.gateway
    before = await gateway.store.version(game_id)
    assert await timed_out(stack, game_id, 0) == ["bot", "playing"]
    # Seat 0's player is back: any command of theirs takes the seat back first (this one
    # comes on seat 1's turn, so the move itself is refused as ever).
    answer = await move(stack, game_id, tokens[0], "back-1")
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"]["code"] == "not_your_turn"
    table = (await stack.http.get(f"/games/{game_id}/table")).json()
    assert table["statuses"] == ["playing", "playing"]
    kinds = await kinds_after(stack, game_id, before)
    assert kinds[0] == "SeatTimedOut"
    assert kinds[-1] == "SeatReclaimed"
    # The game goes on, and seat 0's turn waits for its player: no bot plays it.
    for number in range(20):
        if (await stack.http.get(f"/games/{game_id}/table")).json()["current"] == 0:
            break
        assert (await move(stack, game_id, tokens[1], f"on-{number}")).status_code == 200
    version = await gateway.store.version(game_id)
    assert (await move(stack, game_id, tokens[0], "mine")).status_code == 200
    assert "SeatReclaimed" not in await kinds_after(stack, game_id, version)
    # Both hand-overs are recorded commands: the audit re-decides them (the game is unfinished,
    # so the route does not audit it yet; the core does).
    report = get_game("renature").audit(await gateway.games.events(game_id, 0))
    assert report.ok, report.first_bad


async def test_a_timed_out_seat_is_taken_back_by_a_client_that_only_sends_moves(
    stack: Stack,
) -> None:
    """The gateway's cached state still says seat 0 plays (nothing read the game since its
    timeout): the player's first command, refused as it comes on seat 1's turn (the bot played
    seat 0's at once), takes the seat back all the same."""
    game_id, tokens = await started(stack, {"per_turn": 1, "on_timeout": "bot"})
    gateway = stack.app.state.gateway
    assert (await stack.http.get(f"/games/{game_id}/table")).json()["statuses"][0] == "playing"
    await first_timeout(stack, 0)
    assert gateway.games.cached_statuses(game_id)[0] == "playing"  # stale: nothing read
    body = {"command_id": "only-moves", "command": {"type": "EndTurn"}}
    answer = await stack.http.post(
        f"/games/{game_id}/commands", json=body, headers=bearer(tokens[0])
    )
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"]["code"] == "not_your_turn"
    table = (await stack.http.get(f"/games/{game_id}/table")).json()
    assert table["statuses"] == ["playing", "playing"]


async def test_a_timed_out_seat_is_taken_back_over_the_live_socket(stack: Stack) -> None:
    game_id, _ = await started(stack, {"per_turn": 1, "on_timeout": "bot"})
    gateway = stack.app.state.gateway
    assert await timed_out(stack, game_id, 0) == ["bot", "playing"]
    message = json.dumps({"command_id": "live-1", "command": {"type": "EndTurn"}})
    reply = json.loads((await answer(gateway, game_id, 0, message)).text)
    assert reply["answer"]["error"]["code"] == "not_your_turn"
    table = (await stack.http.get(f"/games/{game_id}/table")).json()
    assert table["statuses"] == ["playing", "playing"]


async def test_the_take_back_route_and_its_refusals(stack: Stack) -> None:
    game_id, tokens = await started(stack, {"per_turn": 1, "on_timeout": "bot"})
    url = f"/games/{game_id}/take-back"
    assert (await stack.http.post(url)).status_code == 401
    refused = await stack.http.post(url, headers=bearer(tokens[0]))
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "not_a_bot_seat"  # it plays for itself
    assert await timed_out(stack, game_id, 0) == ["bot", "playing"]
    refused = await stack.http.post(url, headers=bearer(tokens[1]))
    assert refused.json()["error"]["code"] == "not_a_bot_seat"  # no bot plays seat 1
    taken = await stack.http.post(url, headers=bearer(tokens[0]))
    assert taken.status_code == 200, taken.text
    assert await kinds_after(stack, game_id, taken.json()["first_version"] - 1) == ["SeatReclaimed"]
    table = (await stack.http.get(f"/games/{game_id}/table")).json()
    assert table["statuses"] == ["playing", "playing"]
    again = await stack.http.post(url, headers=bearer(tokens[0]))
    assert (again.status_code, again.json()["error"]["code"]) == (409, "not_a_bot_seat")
    # A game without a take-back (a Renaissance timeout loses) does not offer it.
    other, other_tokens = await started(
        stack, {"per_turn": 60, "on_timeout": "remove"}, game="renaissance"
    )
    refused = await stack.http.post(f"/games/{other}/take-back", headers=bearer(other_tokens[0]))
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "not_offered")
