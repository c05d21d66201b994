"""Attacks on seeds and seats, against a real Redis, the rules service and the gateway.

- A small chosen seed (``731337``) was brute-forced from its bare SHA-256 commitment in 0.33 s:
  now every commitment the service makes is keyed with a secret salt.
- Joining players were not told that the seed was chosen: now the join answer and every seat's
  view say so.
- The FinishGame cause carried the seed on a spectator-visible event, by luck in the same batch
  as GameEnded: now only GameEnded reveals it.
- An envelope with ``seat: null`` put straight on the command stream was accepted for any seat:
  now it is refused and nothing is appended.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis
from faststream.redis import RedisBroker

from eventstore import RedisEventStore
from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.bus import CommandEnvelope
from gameserver.runtime.rules_client import send_command
from gameserver.runtime.settings import Settings
from renature import commands as c
from renature import events as e
from renature.audit import audit
from renature.deal import SALTED, commitment
from renature.rules import legal_actions
from support.gateway import gateway_settings

pytestmark = pytest.mark.redis

CHOSEN = "731337"


@dataclass
class Stack:
    http: httpx.AsyncClient
    store: RedisEventStore
    redis_url: str


@pytest.fixture
async def stack(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Stack]:
    app = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    transport = httpx.ASGITransport(app=app)
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-seeds")),
        app.router.lifespan_context(app),
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as http,
    ):
        yield Stack(http, RedisEventStore(redis), redis_url)


def brute_force(target: str, limit: int = 1_000_000) -> str | None:
    """The attack on a bare commitment: every number below ``limit`` tried against SHA-256."""
    digest = target.removeprefix(SALTED)
    for n in range(limit):
        if hashlib.sha256(str(n).encode()).hexdigest() == digest:
            return str(n)
    return None


async def created_game(
    stack: Stack, seed: str | None
) -> tuple[str, list[dict[str, Any]], list[str]]:
    """Create a 2-player game, join both seats: (game id, join answers, tokens)."""
    body: dict[str, object] = {"players": 2}
    if seed is not None:
        body["seed"] = seed
    response = await stack.http.post("/games", json=body)
    assert response.status_code == 201, response.text
    game_id = response.json()["game_id"]
    joins = []
    for seat in range(2):
        joined = await stack.http.post(f"/games/{game_id}/seats/{seat}", json={"name": f"p{seat}"})
        assert joined.status_code == 201, joined.text
        joins.append(joined.json())
    return game_id, joins, [j["token"] for j in joins]


async def test_a_chosen_seed_cannot_be_brute_forced_from_its_commitment(stack: Stack) -> None:
    game_id, _, _ = await created_game(stack, CHOSEN)
    response = await stack.http.get(f"/games/{game_id}/events")
    created = response.json()[0]
    assert created["type"] == "GameCreated"
    assert created["seed_commitment"].startswith(SALTED)
    assert brute_force(created["seed_commitment"]) is None
    assert created["seed_commitment"] != commitment(CHOSEN)


async def test_joining_players_and_every_view_are_told_the_seed_was_chosen(stack: Stack) -> None:
    game_id, joins, tokens = await created_game(stack, CHOSEN)
    assert [j["seed"] for j in joins] == ["chosen", "chosen"]
    for token in tokens:
        view = await stack.http.get(
            f"/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"}
        )
        assert view.json()["chosen_seed"] is True
    assert (await stack.http.get(f"/games/{game_id}/spectator")).json()["chosen_seed"] is True

    secret_id, secret_joins, secret_tokens = await created_game(stack, None)
    assert [j["seed"] for j in secret_joins] == ["secret", "secret"]
    view = await stack.http.get(
        f"/games/{secret_id}/view", headers={"Authorization": f"Bearer {secret_tokens[0]}"}
    )
    assert view.json()["chosen_seed"] is False


async def test_only_game_ended_reveals_the_seed_and_the_audit_checks_the_salt(
    stack: Stack,
) -> None:
    game_id, _, tokens = await created_game(stack, CHOSEN)
    auth = [{"Authorization": f"Bearer {token}"} for token in tokens]
    assert (await stack.http.post(f"/games/{game_id}/start", headers=auth[0])).status_code == 200
    number = 0
    while True:
        summary = (await stack.http.get(f"/games/{game_id}")).json()
        if summary["phase"] == "finished":
            break
        seat = summary["current_seat"]
        actions = await stack.http.get(f"/games/{game_id}/legal-actions", headers=auth[seat])
        command = actions.json()[0]
        number += 1
        sent = await stack.http.post(
            f"/games/{game_id}/commands",
            json={"command_id": f"m{number}", "command": command},
            headers=auth[seat],
        )
        assert sent.status_code == 200, sent.text
        assert number < 2000
    spectator = (await stack.http.get(f"/games/{game_id}/events")).json()
    ended = spectator[-1]
    assert ended["type"] == "GameEnded"
    assert (ended["seed"], len(ended["salt"])) == (CHOSEN, 64)
    for event in spectator[:-1]:
        assert CHOSEN not in msgspec.json.encode(event.get("cause")).decode()
        assert ended["salt"] not in msgspec.json.encode(event).decode()
    stored = [e.decode(s.data) for s in await stack.store.read(game_id)]
    report = audit(stored)
    assert report.ok, report.findings
    assert "seed matches commitment" in report.checks


async def test_a_seat_command_without_a_seat_on_the_command_stream_is_refused(
    stack: Stack,
) -> None:
    game_id, _, tokens = await created_game(stack, CHOSEN)
    auth = {"Authorization": f"Bearer {tokens[0]}"}
    assert (await stack.http.post(f"/games/{game_id}/start", headers=auth)).status_code == 200
    before = await stack.store.version(game_id)
    state = [e.decode(s.data) for s in await stack.store.read(game_id)]
    from renature.game import replay

    current = replay(state)
    assert current is not None
    move = legal_actions(current, current.current)[0]
    async with RedisBroker(stack.redis_url) as broker:
        reply = await send_command(broker, CommandEnvelope(game_id, "forged", move, None), 5)
        assert (reply.status, reply.code) == ("rejected", "seat_required")
        end = c.EndTurn(seat=current.current)
        reply = await send_command(broker, CommandEnvelope(game_id, "forged-2", end, None), 5)
        assert (reply.status, reply.code) == ("rejected", "seat_required")
    assert await stack.store.version(game_id) == before
