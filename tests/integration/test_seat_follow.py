"""Seats that follow their player: against a real Redis, the real rules service
and the gateway. A recovery code restores a seat on "another device" once; a seat bound to a
user of the identity provider (a JWKS served from a file, tokens signed by a test key) is
reclaimed with that user's fresh token; the old seat token stops working each time; tokens of
another issuer or audience, expired ones, ones signed by another key and another user's are
refused, and a refusal changes nothing."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import redis.asyncio as aioredis
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from websockets.asyncio.client import connect

from gameserver.gateway.app import create_app
from support.gateway import gateway_http, gateway_settings, serving

pytestmark = pytest.mark.redis

ISSUER = "https://accounts.example.test"
AUDIENCE = "renature-frontend"


class Signer:
    """A test identity provider: an EC key whose public half is in a JWKS file."""

    def __init__(self, kid: str) -> None:
        self.kid = kid
        self.key = ec.generate_private_key(ec.SECP256R1())

    def jwk(self) -> dict[str, Any]:
        jwk: dict[str, Any] = json.loads(ECAlgorithm.to_jwk(self.key.public_key()))
        return {**jwk, "kid": self.kid, "use": "sig", "alg": "ES256"}

    def token(self, sub: str, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 300}
        return jwt.encode({**body, **claims}, self.key, "ES256", headers={"kid": self.kid})


@pytest.fixture
def signer() -> Signer:
    return Signer("test-key")


@pytest.fixture
async def http(
    redis: aioredis.Redis, redis_url: str, signer: Signer, tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps({"keys": [signer.jwk()]}))
    async with gateway_http(
        redis_url,
        "rules-seat-follow",
        oidc_issuer=ISSUER,
        oidc_audience=AUDIENCE,
        oidc_jwks=str(jwks),
    ) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code, response.text
    error: dict[str, Any] = response.json()["error"]
    return error


async def new_game(http: httpx.AsyncClient) -> str:
    response = await http.post("/games", json={"players": 2})
    assert response.status_code == 201, response.text
    game_id: str = response.json()["game_id"]
    return game_id


async def join(http: httpx.AsyncClient, game_id: str, seat: int, **extra: Any) -> dict[str, Any]:
    response = await http.post(f"/games/{game_id}/seats/{seat}", json={"name": f"p{seat}", **extra})
    assert response.status_code == 201, response.text
    joined: dict[str, Any] = response.json()
    return joined


async def reclaim(http: httpx.AsyncClient, game_id: str, seat: int, **proof: str) -> httpx.Response:
    return await http.post(f"/games/{game_id}/seats/{seat}/reclaim", json=proof)


async def view_status(http: httpx.AsyncClient, game_id: str, token: str) -> int:
    return (await http.get(f"/games/{game_id}/view", headers=bearer(token))).status_code


async def test_a_recovery_code_restores_the_seat_once(http: httpx.AsyncClient) -> None:
    game_id = await new_game(http)
    first = await join(http, game_id, 0)
    other = await join(http, game_id, 1)
    assert first["recovery"]
    assert first["recovery"] != first["token"]
    assert not first["bound"]
    started = await http.post(f"/games/{game_id}/start", headers=bearer(first["token"]))
    assert started.status_code == 200, started.text

    moved = await reclaim(http, game_id, 0, recovery=first["recovery"])  # another device
    assert moved.status_code == 200, moved.text
    restored = moved.json()
    assert restored["seat"] == 0
    assert restored["token"] != first["token"]
    assert await view_status(http, game_id, restored["token"]) == 200
    refused(
        await http.get(f"/games/{game_id}/view", headers=bearer(first["token"])),
        403,
        "invalid_token",
    )
    assert await view_status(http, game_id, other["token"]) == 200  # the other seat untouched

    refused(await reclaim(http, game_id, 0, recovery=first["recovery"]), 403, "not_your_seat")
    refused(await reclaim(http, game_id, 1, recovery=restored["recovery"]), 403, "not_your_seat")
    again = await reclaim(http, game_id, 0, recovery=restored["recovery"])  # the new code works
    assert again.status_code == 200, again.text
    refused(
        await http.get(f"/games/{game_id}/view", headers=bearer(restored["token"])),
        403,
        "invalid_token",
    )


async def test_a_keyed_join_retried_gets_the_same_recovery_code(http: httpx.AsyncClient) -> None:
    game_id = await new_game(http)
    key = {"Idempotency-Key": "k" * 32}
    answers = [
        await http.post(f"/games/{game_id}/seats/0", json={"name": "Ann"}, headers=key)
        for _ in range(2)
    ]
    assert [a.status_code for a in answers] == [201, 201], answers[1].text
    assert answers[0].json()["recovery"] == answers[1].json()["recovery"]
    assert (await reclaim(http, game_id, 0, recovery=answers[0].json()["recovery"])).is_success


async def test_a_bound_seat_follows_its_user(http: httpx.AsyncClient, signer: Signer) -> None:
    game_id = await new_game(http)
    ann = await join(http, game_id, 0, id_token=signer.token("ann"))
    await join(http, game_id, 1, id_token=signer.token("bob"))
    assert ann["bound"]

    refused(await reclaim(http, game_id, 0, id_token=signer.token("bob")), 403, "not_your_seat")
    moved = await reclaim(http, game_id, 0, id_token=signer.token("ann"))  # a phone, later
    assert moved.status_code == 200, moved.text
    assert await view_status(http, game_id, moved.json()["token"]) == 200
    refused(
        await http.get(f"/games/{game_id}/view", headers=bearer(ann["token"])), 403, "invalid_token"
    )
    back = await reclaim(http, game_id, 0, id_token=signer.token("ann"))  # and back again
    assert back.status_code == 200, back.text
    assert await view_status(http, game_id, moved.json()["token"]) == 403


@pytest.mark.parametrize(
    ("claims", "words"),
    [
        ({"iss": "https://elsewhere.example.test"}, "another issuer"),
        ({"aud": "someone-else"}, "another audience"),
        ({"exp": int(time.time()) - 3600}, "expired"),
    ],
)
async def test_tokens_not_meant_for_us_are_refused(
    http: httpx.AsyncClient, signer: Signer, claims: dict[str, Any], words: str
) -> None:
    game_id = await new_game(http)
    ann = await join(http, game_id, 0, id_token=signer.token("ann"))
    bad = signer.token("ann", **claims)
    error = refused(await reclaim(http, game_id, 0, id_token=bad), 401, "invalid_identity")
    assert words in error["message"]
    assert bad not in json.dumps(error)
    assert await view_status(http, game_id, ann["token"]) == 200  # nothing changed
    joined = await http.post(f"/games/{game_id}/seats/1", json={"name": "Bob", "id_token": bad})
    refused(joined, 401, "invalid_identity")
    summary = (await http.get(f"/games/{game_id}")).json()
    assert summary["open_seats"] == [1]  # the refused join took nothing


async def test_a_token_signed_by_another_key_is_refused(
    http: httpx.AsyncClient, signer: Signer
) -> None:
    game_id = await new_game(http)
    await join(http, game_id, 0, id_token=signer.token("ann"))
    forged = Signer(signer.kid).token("ann")  # same key id, another key
    error = refused(await reclaim(http, game_id, 0, id_token=forged), 401, "invalid_identity")
    assert "signature" in error["message"]
    unsigned = jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "ann"}, "", "none")
    refused(await reclaim(http, game_id, 0, id_token=unsigned), 401, "invalid_identity")


async def test_without_a_provider_an_id_token_is_refused(
    redis: aioredis.Redis, redis_url: str
) -> None:
    async with gateway_http(redis_url, "rules-seat-follow") as http:
        game_id = await new_game(http)
        answer = await http.post(
            f"/games/{game_id}/seats/0", json={"name": "A", "id_token": "x.y.z"}
        )
        refused(answer, 422, "identity_not_configured")
        proofs = await reclaim(http, game_id, 0, recovery="r" * 20, id_token="x.y.z")
        refused(proofs, 422, "malformed_request")


async def test_a_live_socket_of_the_old_token_takes_no_move_after_a_reclaim(
    redis: aioredis.Redis, redis_url: str
) -> None:
    app = create_app(gateway_settings(redis_url), command_timeout=5.0)
    async with (
        gateway_http(redis_url, "rules-seat-follow", app=app) as http,
        serving(app) as address,
    ):
        game_id = await new_game(http)
        first = await join(http, game_id, 0)
        await join(http, game_id, 1)
        started = await http.post(f"/games/{game_id}/start", headers=bearer(first["token"]))
        assert started.status_code == 200, started.text
        before = (await http.get(f"/games/{game_id}")).json()["version"]
        async with connect(f"ws://{address}/games/{game_id}/live?token={first['token']}") as ws:
            moved = await reclaim(http, game_id, 0, recovery=first["recovery"])
            assert moved.status_code == 200, moved.text
            await ws.send(json.dumps({"command_id": "old-device", "command": {"type": "EndTurn"}}))
            frame: dict[str, Any] = {}
            while "error" not in frame:  # the backlog's events first, then the refusal
                frame = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert frame["error"]["code"] == "invalid_token"
            await asyncio.wait_for(ws.wait_closed(), 5)
            assert ws.close_code == 4403
        assert (await http.get(f"/games/{game_id}")).json()["version"] == before  # no move
