"""``renature bots``: bots playing whole games through the HTTP gateway, as a frontend would.

``renature bots play [--game renaissance]`` creates a game with a chosen seed, takes every seat,
starts the game and then, for the seat to move, fetches that seat's own-perspective state
(``GET /state``: its own hand, stand-ins for everyone else's secrets), lets the seat's bot
choose and posts the command with the seat's token. Each seat's bot is seeded with the game's
``bot_seed(seed, seat)`` and asked exactly once per command, in the same order as in the game's
``simulate``, and the masked secrets never influence a bot's choice; so the game, and its
result, equal ``renature simulate`` with the same seed and bots.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from gameplatform.interface import Bot, HostedState, Outcome
from gameplatform.registry import DEFAULT_GAME
from gameserver.cli.game_commands import (
    BoardOpt,
    BotsOpt,
    GameOpt,
    PlayersOpt,
    SeedOpt,
    bot_names,
    the_game,
)

if TYPE_CHECKING:  # httpx is imported when a game is played, not at every start of the CLI
    from gameserver.cli.gateway_client import GatewayClient

app = typer.Typer(help="Bots that play whole games through the HTTP gateway.", no_args_is_help=True)


async def play_game(
    client: GatewayClient,
    players: int,
    seed: str,
    bots: Sequence[str],
    board: str | None = None,
    *,
    max_commands: int = 100_000,
    finish_timeout: float = 30.0,
    think: float | None = None,
) -> Outcome:
    """Play one whole game of the client's game through the gateway; returns the outcome
    (with the gateway's game id). Raises ``GatewayError`` if the gateway refuses anything a
    bot chose."""
    if len(bots) != players:
        raise ValueError(f"{players} players need {players} bots, got {len(bots)}")
    game = client.game
    game_id = await client.create_game(players, board=board or game.boards[0], seed=seed)
    tokens = [await client.join(game_id, seat, name) for seat, name in enumerate(bots)]
    await client.start(game_id, tokens[0])
    agents = [
        timed(game.make_bot(name, game.bot_seed(seed, seat)), think)
        for seat, name in enumerate(bots)
    ]
    seat = 0
    for number in range(max_commands):
        state = await client.state(game_id, tokens[seat])
        mover = game.to_move(state)
        if mover is None:  # over, or waiting for the service (Renature's seed reveal)
            break
        if mover != seat:  # the turn passed: look again with the mover's token
            seat = mover
            state = await client.state(game_id, tokens[seat])
        command = agents[seat](state, seat)
        await client.send(game_id, tokens[seat], command, command_id=f"bot-{number}")
    else:
        raise RuntimeError(f"the game did not end within {max_commands} commands")
    final = await _wait_finished(client, game_id, tokens[seat], finish_timeout)
    return game.outcome(final, list(bots), final.version)


async def _wait_finished(
    client: GatewayClient, game_id: str, token: str, timeout: float
) -> HostedState:
    """The final state. Renature's rules service reveals the seed (``FinishGame``) by itself
    once the last domino is gone; wait for it rather than assume it happened with the last
    move."""
    deadline = time.monotonic() + timeout
    while True:
        state = await client.state(game_id, token)
        if client.game.is_over(state):
            return state
        if time.monotonic() > deadline:
            phase = client.game.table(state).phase
            raise TimeoutError(
                f"game {game_id} is still in phase {phase!r} after {timeout}s: "
                "the rules service did not finish it"
            )
        await asyncio.sleep(0.05)


def timed(
    agent: Bot[HostedState, msgspec.Struct], think: float | None
) -> Callable[[HostedState, int], msgspec.Struct]:
    """The agent's choice; a search bot (one with ``choose_within``) given ``think`` seconds
    searches until they are spent instead of for its iteration budget. The clock is read
    here, never in the pure search."""
    within = getattr(agent, "choose_within", None)  # `gameplatform.search.SearchBot`'s
    if think is None or within is None:
        return agent.choose

    def choose(state: HostedState, seat: int) -> msgspec.Struct:
        deadline = time.monotonic() + think
        chosen: msgspec.Struct = within(state, seat, lambda _: time.monotonic() < deadline)
        return chosen

    return choose


@app.command("play")
def play(
    gateway: Annotated[str, typer.Option(help="the gateway's base URL")] = "http://127.0.0.1:8000",
    players: PlayersOpt = None,
    seed: SeedOpt = "1",
    bots: BotsOpt = "greedy",
    board: BoardOpt = None,
    timeout: Annotated[float, typer.Option(help="seconds to wait for each HTTP answer")] = 30.0,
    game_name: GameOpt = DEFAULT_GAME,
    think_ms: Annotated[
        int | None,
        typer.Option(
            min=1, help="mcts: milliseconds to think per move (default: its iteration budget)"
        ),
    ] = None,
) -> None:
    """Play a whole game through the gateway and print its outcome as JSON.

    Same seed and bots as ``renature simulate --json``: same scores, ranking and winners
    (with ``--think-ms`` the search bot's moves depend on the machine's speed instead).
    """
    from gameserver.cli.gateway_client import GatewayClient

    game = the_game(game_name)
    count = players if players is not None else max(game.player_counts)
    if count not in game.player_counts or (board is not None and board not in game.boards):
        raise typer.BadParameter(
            f"A {game.name} game has {', '.join(map(str, game.player_counts))} players and the "
            f"boards {', '.join(game.boards)}."
        )
    names = bot_names(game, bots, count)
    think = None if think_ms is None else think_ms / 1000

    async def run() -> Outcome:
        async with GatewayClient(gateway, timeout=timeout, game=game_name) as client:
            return await play_game(client, count, seed, names, board, think=think)

    result = asyncio.run(run())
    sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
