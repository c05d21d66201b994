"""In-process commands: simulate games, show boards, print schemas."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer
from rich.console import Console
from rich.text import Text

from gameplatform.registry import DEFAULT_GAME
from gameserver.cli import game_commands
from renature import board as boards
from renature import commands, events
from renature.components import COLOURS, PLANT_TYPES, components, plant_colour, plant_type
from renature.state import GameState

board_app = typer.Typer(help="Boards: draw them or print them as JSON.", no_args_is_help=True)

AREA_STYLES = ("on dark_orange3", "on orange4", "on dark_goldenrod", "on tan", "on wheat4")


def option_values(given: list[str]) -> dict[str, Any]:
    """``--option NAME=VALUE`` pairs (a value is read as JSON where it is JSON: ``sets=2``)."""
    options: dict[str, Any] = {}
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
    players: Annotated[
        int | None, typer.Option(help="how many players (default: the game's most)")
    ] = None,
    seed: Annotated[str, typer.Option(help="the game seed: same seed, same game")] = "1",
    bots: Annotated[
        str, typer.Option(help="bots by seat, comma-separated: random, greedy, mcts")
    ] = "greedy",
    board: Annotated[
        str | None, typer.Option(help="one of the game's boards (default: its first)")
    ] = None,
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
    board_id: Annotated[str, typer.Argument(help="base, valley or valley-back")] = "base",
    as_json: Annotated[bool, typer.Option("--json", help="print the board data as JSON")] = False,
) -> None:
    """Draw a board in the terminal (colours where the terminal has them), or print its JSON."""
    try:
        board = boards.load_board(board_id)
    except boards.UnknownBoard as err:
        raise typer.BadParameter(str(err)) from None
    if as_json:
        sys.stdout.write(
            msgspec.json.format(msgspec.json.encode(boards.board_json(board))).decode()
        )
        sys.stdout.write("\n")
        return
    Console().print(render_board(board))


PLANT_STYLE = {
    "orange": "bold dark_orange",
    "blue": "bold blue",
    "black": "bold black",
    "white": "bold bright_white",
    "neutral": "bold green",
}


def render_board(board: boards.Board, state: GameState | None = None) -> Text:
    """The board as coloured text: brook `~`, starting spaces `@`, stumps `^`, areas by letter
    (clouds on a space shown as their count), off-board blank. With a game state: each covered
    space shows its animal's first letter and each plant its type's letter (t, b, p, o) in its
    colour."""
    comps = components()
    text = Text()
    text.append("   " + "".join(f"{x % 10}" for x in range(board.width)) + "\n", style="dim")
    for y in range(board.height):
        text.append(f"{y:2} ", style="dim")
        for x in range(board.width):
            cell = board.index(x, y)
            kind = board.kinds[cell]
            clouds = state.clouds[cell] if state else board.clouds[cell]
            area = state.area_of[cell] if state else board.area_of[cell]
            if kind == boards.OFF:
                text.append(" ")
            elif area >= 0:
                style = AREA_STYLES[area % len(AREA_STYLES)]
                code = state.plants[cell] if state else -1
                if code >= 0:
                    colour = COLOURS[plant_colour(code)]
                    mark = PLANT_TYPES[plant_type(code)][0]
                    text.append(mark, style=f"{PLANT_STYLE[colour]} {style}")
                else:
                    mark = str(clouds) if clouds else board.area_ids[area]
                    text.append(mark, style=f"bold white {style}")
            elif state is not None and state.cover[cell] >= 0:
                text.append(comps.animals[state.cover[cell]][0], style="bold black on bright_white")
            elif cell in board.starts:
                text.append("@", style="bold yellow on blue")
            elif cell in board.stumps:
                text.append("^", style="bold red on green")
            else:
                mark = str(clouds) if clouds else "~"
                style = "white on blue" if board.path_name == "brook" else "black on green"
                text.append(mark, style=style)
        text.append("\n")
    if state is None:
        sizes = ", ".join(f"{a}={s}" for a, s in zip(board.area_ids, board.area_sizes, strict=True))
        text.append(f"{board.name}: {board.width}x{board.height}; area sizes {sizes}\n")
        text.append("~ brook/meadow   @ starting space   ^ stump   digit: clouds on that space\n")
    else:
        text.append(f"joker: {comps.animals[state.joker]}; animals by first letter; ")
        text.append("plants t(urf) b(ush) p(ine) o(ak) in their colour\n")
    return text


def schema(
    what: Annotated[str, typer.Argument(help="events, commands or board")] = "events",
) -> None:
    """Print the JSON Schema of the events, the commands or the board JSON."""
    types: dict[str, object] = {
        "events": events.AnyEvent,
        "commands": commands.AnyCommand,
        "board": boards.BoardJson,
    }
    if what not in types:
        raise typer.BadParameter("choose events, commands or board")
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
