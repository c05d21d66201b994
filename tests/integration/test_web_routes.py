"""The routes the web client adds to the API: the board picture after any event, the
stateless inspection of an exported events file (POST /disputes), and what lets a client play
any hosted game without knowing it (the generic table): the catalog, a game's table facts
after any event, a seat's moves and the log, both in words, and the words of an upload (these
for every hosted game). Real Redis, a real rules service, the gateway app in process."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis

from eventstore import RedisEventStore
from gameplatform import game_names, get_game
from gameplatform.words import words as in_words
from gameserver.cli.bot_commands import play_game
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from renature import events as e
from renature.game import replay
from renature.picture import board_svg
from support.gateway import gateway_settings
from support.hosting import hosted, replayed

pytestmark = pytest.mark.redis
GAMES = list(game_names())


@dataclass
class Web:
    client: GatewayClient
    http: httpx.AsyncClient
    store: RedisEventStore
    redis: aioredis.Redis
    transport: httpx.ASGITransport


@pytest.fixture
async def web(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Web]:
    app = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    transport = httpx.ASGITransport(app=app)
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-web")),
        app.router.lifespan_context(app),
        GatewayClient("http://gateway", transport=transport) as client,
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as http,
    ):
        yield Web(client, http, RedisEventStore(redis), redis, transport)


async def stored(web: Web, game_id: str) -> list[e.Event]:
    return [e.decode(s.data) for s in await web.store.read(game_id)]


async def test_the_picture_after_any_event_is_the_export_drawing(web: Web) -> None:
    result = await play_game(web.client, 2, "web-picture", ["greedy", "random"])
    events = await stored(web, result.game_id)
    for at in (4, len(events) // 2, len(events)):
        response = await web.http.get(f"/games/{result.game_id}/picture.svg", params={"at": at})
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("image/svg+xml")
        state = replay(events[:at])
        assert state is not None
        title = f"Renature game {state.game_id} after event {at}"
        assert response.text == board_svg(state, title)
    # Past the last event, or without `at`: the game as it is now.
    last = await web.http.get(f"/games/{result.game_id}/picture.svg")
    past = await web.http.get(f"/games/{result.game_id}/picture.svg", params={"at": 10**6})
    assert last.text == past.text
    assert f"after event {len(events)}" in last.text
    assert (await web.http.get(f"/games/{result.game_id}/picture.svg?at=0")).status_code == 422
    assert (await web.http.get(f"/games/{'0' * 32}/picture.svg")).status_code == 404


async def test_the_picture_of_a_running_game_names_no_secret(web: Web) -> None:
    """A held token's id names its back: the picture shows tokens front up only."""
    game_id = await web.client.create_game(2, seed="web-running")
    tokens = [await web.client.join(game_id, seat, f"p{seat}") for seat in range(2)]
    await web.client.start(game_id, tokens[0])
    events = await stored(web, game_id)
    created = events[0]
    assert isinstance(created, e.GameCreated)
    assert created.deal is not None
    response = await web.http.get(f"/games/{game_id}/picture.svg")
    assert response.status_code == 200
    ids = set(created.deal.area_tokens.values()) | set(created.deal.spare_tokens)
    named = {token for token in ids if re.search(rf"\b{re.escape(token)}\b", response.text)}
    assert named == set()


async def test_an_exported_file_is_audited_explained_and_drawn_and_nothing_is_kept(
    web: Web,
) -> None:
    result = await play_game(web.client, 2, "web-dispute", ["greedy", "greedy"])
    events = await stored(web, result.game_id)
    export = b"\n".join(e.encode(event) for event in events) + b"\n"
    keys_before = await web.redis.dbsize()
    response = await web.http.post("/disputes", content=export)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["audit"]["ok"]
    assert body["audit"]["finished"]
    assert body["explanation"]["scores"] == result.scores
    assert body["event_count"] == len(events)
    assert "events" not in body  # the client has the file: its events are not sent back
    padded = b"\n".join(
        line[:-1] + b', "pad": "' + b"p" * 10_000 + b'"}' for line in export.splitlines()
    )
    assert 1024 * 1024 < len(padded) < 4 * 1024 * 1024
    big = await web.http.post("/disputes", content=padded)  # fields no event has: ignored
    assert big.status_code == 200, big.text[:300]
    assert len(big.content) < 2 * len(response.content)  # the answer does not grow with it
    stepped = await web.http.post("/disputes", params={"at": 30}, content=export)
    assert stepped.status_code == 200, stepped.text
    body = stepped.json()
    assert (body["audit"], body["explanation"], body["version"]) == (None, None, 30)
    state = replay(events[:30])
    assert state is not None
    assert body["picture"] == board_svg(state, f"Renature game {state.game_id} after event 30")
    assert await web.redis.dbsize() == keys_before  # an inspection stores nothing

    forged = [json.loads(line) for line in export.splitlines()]
    target = next(i for i, raw in enumerate(forged) if raw["type"] == "PlantPlaced")
    forged[target]["points"] += 5
    text = "\n".join(json.dumps(raw) for raw in forged)
    report = (await web.http.post("/disputes", content=text)).json()["audit"]
    assert not report["ok"]
    assert report["first_bad"]["version"] == forged[target]["version"]


@pytest.mark.parametrize(
    ("content", "line", "words"),
    [
        (b"\n \n", 0, "holds no events"),
        (b"not json at all", 1, "line 1 is not an event"),
        (b'{"type": "GameCreated"}\n', 1, "line 1 is not an event"),
    ],
)
async def test_a_file_that_is_no_game_gets_a_failed_audit_not_an_error(
    web: Web, content: bytes, line: int, words: str
) -> None:
    response = await web.http.post("/disputes", content=content)
    assert response.status_code == 200, response.text
    body = msgspec.json.decode(response.content)
    assert body["picture"] is None
    assert body["explanation"] is None
    assert not body["audit"]["ok"]
    assert body["audit"]["first_bad"]["version"] == line
    assert words in body["audit"]["first_bad"]["message"]
    assert len(response.content) < 2000  # nothing unbounded is echoed


async def test_no_body_is_a_malformed_request(web: Web) -> None:
    response = await web.http.post("/disputes")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "malformed_request"


async def test_a_file_nested_too_deep_is_refused_by_the_gateways_limit(web: Web) -> None:
    response = await web.http.post("/disputes", content=b"[" * 5000)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "body_too_deep"


async def test_a_file_over_four_megabytes_is_refused_unread(web: Web) -> None:
    keys_before = await web.redis.dbsize()
    response = await web.http.post("/disputes", content=b"x" * (5 * 1024 * 1024))
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"
    assert await web.redis.dbsize() == keys_before


def client_of(web: Web, name: str) -> GatewayClient:
    return GatewayClient("http://gateway", transport=web.transport, game=name)


async def stored_of(web: Web, name: str, game_id: str) -> list[Any]:
    game = get_game(name)
    return [game.decode_event(s.data) for s in await web.store.read(game_id)]


async def catalog(web: Web) -> dict[str, dict[str, Any]]:
    response = await web.http.get("/games/catalog")
    assert response.status_code == 200, response.text
    return {entry["name"]: entry for entry in response.json()}


async def test_the_catalog_offers_every_hosted_game_as_the_registry_has_it(web: Web) -> None:
    response = await web.http.get("/games/catalog")
    assert [entry["name"] for entry in response.json()] == GAMES  # the default first
    for entry in response.json():
        game = get_game(entry["name"])
        assert entry["title"] == game.title
        assert entry["player_counts"] == list(game.player_counts)
        assert entry["boards"] == list(game.boards)
        assert [s["players"] for s in entry["seats"]] == list(game.player_counts)
        assert all(len(s["colours"]) == s["players"] for s in entry["seats"])
        assert "lobby" in entry["phases"]
    document = (await web.http.get("/openapi.json")).json()
    for path in ("/games/catalog", "/games/{game_id}/table", "/games/{game_id}/moves"):
        assert path in document["paths"]
    assert "/games/{game_id}/log" in document["paths"]


@pytest.mark.parametrize("name", hosted(GAMES))
async def test_every_choice_the_catalog_offers_creates_such_a_game(web: Web, name: str) -> None:
    """What the lobby's form may send (each option at its default, then each other choice or
    the ends of its range) is what POST /games takes; the seats are the catalog's."""
    entry = (await catalog(web))[name]
    bodies: list[dict[str, Any]] = [{}]
    for option in entry["options"]:
        if option["kind"] == "choice":
            bodies += [{option["name"]: choice} for choice in option["choices"]]
        elif option["kind"] == "integer":
            bodies += [{option["name"]: option["minimum"]}, {option["name"]: option["maximum"]}]
    for seating in entry["seats"]:
        for board in entry["boards"]:
            for options in bodies:
                body = {"game": name, "players": seating["players"], "board": board, **options}
                response = await web.http.post("/games", json=body)
                if response.status_code == 422 and options:  # a choice needing another: named
                    (asked,) = options
                    assert asked in response.json()["error"]["message"], response.text
                    continue
                assert response.status_code == 201, (body, response.text)
                table = (await web.http.get(f"/games/{response.json()['game_id']}/table")).json()
                assert table["colours"] == seating["colours"]
                assert table["board"] == board


@pytest.mark.parametrize("name", hosted(GAMES))
async def test_a_seats_moves_are_its_legal_actions_in_words(web: Web, name: str) -> None:
    game = get_game(name)
    async with client_of(web, name) as client:
        game_id = await client.create_game(game.player_counts[0], seed=f"moves-{name}")
        tokens = [
            await client.join(game_id, seat, f"p{seat}") for seat in range(game.player_counts[0])
        ]
        await client.start(game_id, tokens[0])
        table = (await web.http.get(f"/games/{game_id}/table")).json()
        for seat, token in enumerate(tokens):
            auth = {"Authorization": f"Bearer {token}"}
            moves = (await web.http.get(f"/games/{game_id}/moves", headers=auth)).json()
            legal = (await web.http.get(f"/games/{game_id}/legal-actions", headers=auth)).json()
            assert [move["command"] for move in moves] == legal
            assert bool(legal) == (seat == table["to_move"])
            for move in moves:
                command = game.decode_command(msgspec.json.encode(move["command"]))
                assert move["text"] == in_words(game, command, table["colours"])
        refused = await web.http.get(f"/games/{game_id}/moves")
        assert refused.status_code == 401


@pytest.mark.parametrize("name", hosted(GAMES))
async def test_the_log_and_the_table_of_a_whole_game_for_anyone(web: Web, name: str) -> None:
    """The log is the events as ``/events`` shows them to the reader (a spectator: secrets
    blanked), each in words; the table after any event is the replay's."""
    game = get_game(name)
    async with client_of(web, name) as client:
        bots = [game.bot_names[0]] * game.player_counts[0]
        result = await play_game(client, len(bots), f"log-{name}", bots)
    events = await stored_of(web, name, result.game_id)
    log = (await web.http.get(f"/games/{result.game_id}/log")).json()
    shown = (await web.http.get(f"/games/{result.game_id}/events")).json()
    assert [line["event"] for line in log] == shown
    colours = list(game.table(replayed(game, events)).colours)
    visible = [game.visible_event(event, None) for event in events]
    assert [line["text"] for line in log] == [in_words(game, event, colours) for event in visible]
    later = (await web.http.get(f"/games/{result.game_id}/log", params={"after": 5})).json()
    assert later == log[5:]
    for at in (3, len(events) // 2, len(events)):
        table = await web.http.get(f"/games/{result.game_id}/table", params={"at": at})
        expected = msgspec.to_builtins(game.table(replayed(game, events[:at])))
        assert table.json() == expected
    assert (await web.http.get(f"/games/{'0' * 32}/log")).status_code == 404


@pytest.mark.parametrize("name", hosted(GAMES))
async def test_an_uploaded_export_is_told_in_words_and_nothing_is_kept(web: Web, name: str) -> None:
    game = get_game(name)
    async with client_of(web, name) as client:
        bots = [game.bot_names[0]] * game.player_counts[0]
        result = await play_game(client, len(bots), f"upload-{name}", bots)
    events = await stored_of(web, name, result.game_id)
    export = b"\n".join(game.encode_event(event) for event in events) + b"\n"
    keys_before = await web.redis.dbsize()
    response = await web.http.post("/disputes", content=export)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["game"] == name
    assert body["audit"]["ok"]
    final = replayed(game, events)
    colours = list(game.table(final).colours)
    assert body["log"] == [in_words(game, event, colours) for event in events]
    # A step of the file: its table (and picture) only, the whole file's audit asked once.
    step = (await web.http.post("/disputes", params={"at": 4}, content=export)).json()
    assert step["audit"] is None
    assert step["log"] == []
    assert step["table"] == msgspec.to_builtins(game.table(replayed(game, events[:4])))
    assert await web.redis.dbsize() == keys_before
