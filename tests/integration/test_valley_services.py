"""The Valley mushroom phase through the services: a real Redis, the real rules service and
the gateway (both in this event loop, HTTP over ``httpx.ASGITransport``) and the board
projector.

Bots play a Valley game through the gateway until a domino covers a tree stump; then the seat
that covered it is offered exactly ``PlaceMushroom`` on every free meadow space beside an area
space, and ``SkipMushroom``, by ``/legal-actions`` (and by its own-perspective ``/state``, which
bots decide on), nobody else is offered anything, and the views say whose mushroom it is. A
mushroom placed through the gateway shows in the views and in the board read model with the
areas it merged; a declined one goes back to the supply; a refused mushroom command appends
nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis

from eventstore import RedisEventStore
from gameplatform.interface import HostedState
from gameserver.cli.gateway_client import GatewayClient
from gameserver.gateway.app import create_app
from gameserver.projectors import BoardProjection, Projector
from gameserver.rules.rules_service import RulesService
from gameserver.runtime.settings import Settings
from renature import commands as c
from renature import events as e
from renature.board import PATH
from renature.bots import make_bot
from renature.game import bot_seed, replay
from renature.placement import mushroom_spaces
from renature.rules import legal_actions
from renature.state import GameState
from renature.view import view
from support.boards import areas_beside
from support.gateway import gateway_settings
from support.hosting import state_as

pytestmark = pytest.mark.redis

SEED = "mushroom-1"  # greedy bots cover a stump within about 25 commands on either side


@dataclass
class Stack:
    client: GatewayClient
    http: httpx.AsyncClient
    store: RedisEventStore
    board: Projector[HostedState]


@dataclass
class Game:
    """A game waiting for ``mover`` to place or decline the mushroom just gained."""

    game_id: str
    tokens: list[str]
    mover: int

    @property
    def token(self) -> str:
        return self.tokens[self.mover]

    def other(self) -> int:
        return (self.mover + 1) % len(self.tokens)


@pytest.fixture
async def stack(redis: aioredis.Redis, redis_url: str) -> AsyncIterator[Stack]:
    app = create_app(gateway_settings(redis_url, allow_chosen_seeds=True), command_timeout=5.0)
    transport = httpx.ASGITransport(app=app)
    store = RedisEventStore(redis)
    board = Projector(store, redis, BoardProjection(), "board-valley")
    await board.setup()
    async with (
        RulesService(Settings.of(redis_url=redis_url, consumer="rules-valley")),
        app.router.lifespan_context(app),
        GatewayClient("http://gateway", transport=transport) as client,
        httpx.AsyncClient(base_url="http://gateway", transport=transport) as http,
    ):
        yield Stack(client, http, store, board)


async def at_a_mushroom(stack: Stack, board: str = "valley", players: int = 2) -> Game:
    """Greedy bots play through the gateway until one of them gains a mushroom."""
    client = stack.client
    game_id = await client.create_game(players, board=board, seed=SEED)
    tokens = [await client.join(game_id, seat, f"p{seat}") for seat in range(players)]
    await client.start(game_id, tokens[0])
    bots = [make_bot("greedy", bot_seed(SEED, seat)) for seat in range(players)]
    for number in range(200):
        summary = await client.summary(game_id)
        seat = summary["current_seat"]
        if summary["phase"] == "place_mushroom":
            return Game(game_id, tokens, seat)
        assert summary["phase"] not in ("final_scoring", "finished")
        state = await state_as(client, game_id, tokens[seat], GameState)
        await client.send(game_id, tokens[seat], bots[seat].choose(state, seat), f"m{number}")
    raise AssertionError("no stump was covered within 200 commands")


async def stored_events(stack: Stack, game_id: str, after: int = 0) -> list[e.Event]:
    return [e.decode(s.data) for s in await stack.store.read(game_id, after_version=after)]


async def true_state(stack: Stack, game_id: str) -> GameState:
    """The game as the rules service decided it: a fold of the stored stream."""
    state = replay(await stored_events(stack, game_id))
    assert state is not None
    return state


async def post(
    stack: Stack, game: Game, seat: int, command: dict[str, Any], command_id: str
) -> httpx.Response:
    """A raw command as a frontend sends it (``seat`` left out: the token's seat is used)."""
    return await stack.http.post(
        f"/games/{game.game_id}/commands",
        json={"command_id": command_id, "command": command},
        headers={"Authorization": f"Bearer {game.tokens[seat]}"},
    )


def mushroom_json(x: int, y: int) -> dict[str, Any]:
    return {"type": "PlaceMushroom", "cell": {"x": x, "y": y}}


async def projected_board(stack: Stack, game_id: str) -> Any:
    """The board read model once the projector has taken every new event in."""
    while await stack.board.poll(block_ms=None):
        pass
    response = await stack.http.get(f"/games/{game_id}/board")
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("board", ["valley", "valley-back"])
async def test_the_mushroom_phase_offers_place_and_skip_mushroom_to_its_seat_only(
    stack: Stack, board: str
) -> None:
    game = await at_a_mushroom(stack, board)
    state = await true_state(stack, game.game_id)
    assert (state.board_id, state.phase, state.current) == (board, "place_mushroom", game.mover)
    assert isinstance((await stored_events(stack, game.game_id))[-1], e.MushroomGained)

    offered = await stack.client.legal_actions(game.game_id, game.token)
    assert offered == legal_actions(state, game.mover)
    places = [a for a in offered if isinstance(a, c.PlaceMushroom)]
    assert places
    assert offered == [*places, c.SkipMushroom(game.mover)]
    layout = state.board
    spaces = {(a.cell.x, a.cell.y) for a in places}
    assert spaces == {layout.xy(cell) for cell in mushroom_spaces(state)}
    for x, y in spaces:  # free meadow spaces beside at least one area space
        cell = layout.index(x, y)
        assert layout.kinds[cell] == PATH
        assert (state.cover[cell], state.area_of[cell]) == (-1, -1)
        assert areas_beside(state, state.board.index(x, y))
    raw = await stack.http.get(
        f"/games/{game.game_id}/legal-actions", headers={"Authorization": f"Bearer {game.token}"}
    )
    assert [a["type"] for a in raw.json()] == ["PlaceMushroom"] * len(places) + ["SkipMushroom"]

    # A bot deciding on the seat's own-perspective state has the same choice.
    own = await state_as(stack.client, game.game_id, game.token, GameState)
    assert own.phase == "place_mushroom"
    assert legal_actions(own, game.mover) == offered
    # Nobody else may act meanwhile.
    assert await stack.client.legal_actions(game.game_id, game.tokens[game.other()]) == []

    for viewer, token in ((game.mover, game.token), (game.other(), game.tokens[game.other()])):
        seen = await stack.client.view(game.game_id, token)
        assert (seen.viewer, seen.current_seat) == (viewer, game.mover)
        assert seen.phase == "place_mushroom"
        assert (seen.mushrooms_left, seen.mushrooms) == (7, [])
    spectator = await stack.client.view(game.game_id)
    assert (spectator.phase, spectator.current_seat) == ("place_mushroom", game.mover)
    assert spectator == view(state, None)


async def test_a_mushroom_placed_through_the_gateway_merges_areas_in_the_views_and_board_model(
    stack: Stack,
) -> None:
    game = await at_a_mushroom(stack)
    state = await true_state(stack, game.game_id)
    places = [
        a
        for a in await stack.client.legal_actions(game.game_id, game.token)
        if isinstance(a, c.PlaceMushroom)
    ]

    def beside(cell: c.Cell) -> set[int]:
        return areas_beside(state, state.board.index(cell.x, cell.y))

    chosen = max(places, key=lambda a: len(beside(a.cell))).cell
    joined = sorted(beside(chosen))
    assert len(joined) >= 2, "the seed should offer a mushroom space that joins areas"

    response = await post(stack, game, game.mover, mushroom_json(chosen.x, chosen.y), "mush")

    assert response.status_code == 200, response.text
    (placed,) = await stored_events(stack, game.game_id, after=state.version)
    assert isinstance(placed, e.MushroomPlaced)
    ids = state.board.area_ids
    assert (placed.seat, placed.x, placed.y) == (game.mover, chosen.x, chosen.y)
    assert (placed.area, placed.joined) == (ids[joined[0]], [ids[a] for a in joined])
    assert placed.size == 1 + sum(state.area_sizes[a] for a in joined)
    after = await true_state(stack, game.game_id)
    assert (after.phase, after.current) == ("place_plant", game.mover)

    spectator = await stack.client.view(game.game_id)
    assert spectator.mushrooms_left == 7
    assert [(m.x, m.y, m.area) for m in spectator.mushrooms] == [(chosen.x, chosen.y, placed.area)]
    areas = {area.id: area.size for area in spectator.areas}
    assert areas[placed.area] == placed.size
    assert not set(placed.joined[1:]) & set(areas)
    model = await projected_board(stack, game.game_id)
    assert model == msgspec.to_builtins(view(after, None))
    assert model["mushrooms"] == [{"x": chosen.x, "y": chosen.y, "area": placed.area}]
    assert {area["id"]: area["size"] for area in model["areas"]} == areas

    # On to the plant: no mushroom command is offered any more.
    offered = await stack.client.legal_actions(game.game_id, game.token)
    assert offered == legal_actions(after, game.mover)
    assert c.SkipPlant(game.mover) in offered
    assert not [a for a in offered if isinstance(a, c.PlaceMushroom | c.SkipMushroom)]


async def test_a_mushroom_declined_through_the_gateway_goes_back_to_the_supply(
    stack: Stack,
) -> None:
    game = await at_a_mushroom(stack)
    version = (await true_state(stack, game.game_id)).version

    response = await post(stack, game, game.mover, {"type": "SkipMushroom"}, "skip")

    assert response.status_code == 200, response.text
    (declined,) = await stored_events(stack, game.game_id, after=version)
    assert isinstance(declined, e.MushroomDeclined)
    assert (declined.seat, declined.mushrooms_left) == (game.mover, 8)
    spectator = await stack.client.view(game.game_id)
    assert spectator.phase == "place_plant"
    assert (spectator.mushrooms_left, spectator.mushrooms) == (8, [])
    offered = await stack.client.legal_actions(game.game_id, game.token)
    assert c.SkipPlant(game.mover) in offered
    assert not [a for a in offered if isinstance(a, c.PlaceMushroom | c.SkipMushroom)]
    model = await projected_board(stack, game.game_id)
    assert (model["phase"], model["mushrooms_left"], model["mushrooms"]) == ("place_plant", 8, [])


async def test_refused_mushroom_commands_append_nothing(stack: Stack) -> None:
    game = await at_a_mushroom(stack)
    state = await true_state(stack, game.game_id)
    offered = await stack.client.legal_actions(game.game_id, game.token)
    space = next(a for a in offered if isinstance(a, c.PlaceMushroom)).cell
    area_space = state.board.xy(state.area_of.index(0))  # an area space is no meadow space

    refusals = [
        (game.other(), mushroom_json(space.x, space.y), "not_your_turn"),
        (game.other(), {"type": "SkipMushroom"}, "not_your_turn"),
        (game.mover, mushroom_json(*area_space), "illegal_mushroom"),
        (game.mover, {"type": "SkipPlant"}, "wrong_phase"),
        (game.mover, {"type": "EndTurn"}, "wrong_phase"),
    ]
    for number, (seat, command, code) in enumerate(refusals):
        response = await post(stack, game, seat, command, f"refused-{number}")
        assert response.status_code == 409, (command, response.text)
        assert response.json()["error"]["code"] == code, command
    response = await post(stack, game, game.mover, mushroom_json(99, 99), "off-board")
    assert response.status_code == 409, response.text
    assert response.json()["error"]["code"] == "illegal_mushroom"
    response = await post(stack, game, game.mover, mushroom_json(256, 0), "beyond-any-grid")
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_command"

    assert await stored_events(stack, game.game_id, after=state.version) == []
    assert await stack.client.legal_actions(game.game_id, game.token) == offered

    # Once declined, the mushroom cannot be declined (or placed) again.
    assert (await post(stack, game, game.mover, {"type": "SkipMushroom"}, "skip")).is_success
    again = await post(stack, game, game.mover, mushroom_json(space.x, space.y), "late")
    assert again.status_code == 409, again.text
    assert again.json()["error"]["code"] == "wrong_phase"
    assert len(await stored_events(stack, game.game_id, after=state.version)) == 1
