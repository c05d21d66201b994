"""In-process commands: simulate games, show boards, print schemas."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import msgspec
import typer
from rich.console import Console
from rich.text import Text

from gameplatform.interface import JsonValue
from gameplatform.registry import DEFAULT_GAME
from gameserver.cli import game_commands

board_app = typer.Typer(help="Boards: draw them or print them as JSON.", no_args_is_help=True)


def option_values(given: list[str]) -> dict[str, JsonValue]:
    """``--option NAME=VALUE`` pairs (a value is read as JSON where it is JSON: ``sets=2``)."""
    options: dict[str, JsonValue] = {}
    for pair in given:
        name, equals, value = pair.partition("=")
        if not equals or not name:
            raise typer.BadParameter(f"--option takes NAME=VALUE, not {pair!r}")
        try:
            options[name] = json.loads(value)
        except json.JSONDecodeError:
            options[name] = value
    return options


def simulate(
    players: game_commands.PlayersOpt = None,
    seed: game_commands.SeedOpt = "1",
    bots: game_commands.BotsOpt = "greedy",
    board: game_commands.BoardOpt = None,
    events_file: Annotated[
        Path | None, typer.Option("--events", help="write every event as JSON lines here")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
    game_name: game_commands.GameOpt = DEFAULT_GAME,
    sets: Annotated[int | None, typer.Option(help="the option sets (games that take it)")] = None,
    competition: Annotated[
        str | None, typer.Option(help="the option competition (games that take it)")
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option(help="a game's option as NAME=VALUE (repeatable)")
    ] = None,
) -> None:
    """Play a whole game with bots, in process. Same arguments, same output, byte for byte.
    A player count, board or option the game does not take is refused."""
    options = {"sets": sets, "competition": competition, **option_values(option or [])}
    log, result, names = game_commands.simulate(
        game_name, seed, bots, players=players, board=board, options=options
    )
    game = game_commands.the_game(game_name)
    if events_file is not None:
        with events_file.open("wb") as out:
            for event in log:
                out.write(game.encode_event(event) + b"\n")
    if as_json:
        sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
        return
    facts = msgspec.to_builtins(result)
    title = f"{game.title}, {len(names)} players, seed {seed!r}"
    if "board" in facts:
        title += f", board {facts['board']}"
    game_commands.print_outcome(result, names, title)


@board_app.command("show")
def board_show(
    board_id: Annotated[
        str | None, typer.Argument(help="a board of the game (default: its first)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the board data as JSON")] = False,
    game_name: game_commands.GameOpt = DEFAULT_GAME,
) -> None:
    """Draw a board in the terminal (the game's own picture of a game just set up on it), or
    print its geometry as JSON (for a game whose board has one)."""
    game = game_commands.the_game(game_name)
    board = board_id or game.boards[0]
    if board not in game.boards:
        raise typer.BadParameter(f"{game.name} boards: {', '.join(game.boards)}, not {board!r}")
    if as_json:
        geometry = game.board_geometry(board)
        if geometry is None:
            raise typer.BadParameter(f"{game.name}'s board {board!r} is its picture alone")
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(geometry)).decode() + "\n")
        return
    players = game.player_counts[0]
    names = [f"seat {seat}" for seat in range(players)]
    setup = game.setup_commands("board", "board", players, names, board, None)
    state = None
    for command in setup:
        _, state = game.execute(state, command)
    assert state is not None, "a game's setup commands create it"
    Console().print(Text(game.picture_text(state)))


def schema(
    what: Annotated[str, typer.Argument(help="events, commands or board")] = "events",
    game_name: game_commands.GameOpt = DEFAULT_GAME,
) -> None:
    """Print the JSON Schema of the game's events, its commands or its board JSON."""
    game = game_commands.the_game(game_name)
    geometry = game.board_geometry(game.boards[0])
    types: dict[str, object] = {"events": game.event_type, "commands": game.command_type}
    if geometry is not None:
        types["board"] = type(geometry)
    if what not in types:
        raise typer.BadParameter(f"choose {' or '.join(types)} for {game.name}")
    sys.stdout.write(
        msgspec.json.format(msgspec.json.encode(msgspec.json.schema(types[what]))).decode() + "\n"
    )


def corpus(
    check_file: Annotated[
        Path | None,
        typer.Option("--check", help="replay the games of this corpus file and compare"),
    ] = None,
    game_name: game_commands.GameOpt = DEFAULT_GAME,
) -> None:
    """Print the corpus of recorded games (JSON lines, as in docs/corpus.jsonl), or check a
    corpus file: every game is replayed, and the legal actions counted before each command
    and the result must be the recorded ones. Exit status 1 when any game differs."""
    game_commands.corpus(game_name, check_file)


def register(app: typer.Typer) -> None:
    app.command()(simulate)
    app.command()(schema)
    app.command()(corpus)
    app.add_typer(board_app, name="board")
