"""In-process commands: simulate games, show boards, print schemas."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import msgspec
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gameserver.cli import game_commands
from renature import board as boards
from renature import commands, events
from renature.components import COLOURS, PLANT_TYPES, components, plant_colour, plant_type
from renature.game import outcome, play
from renature.state import GameState

board_app = typer.Typer(help="Boards: draw them or print them as JSON.", no_args_is_help=True)

AREA_STYLES = ("on dark_orange3", "on orange4", "on dark_goldenrod", "on tan", "on wheat4")


def parse_bots(spec: str, players: int, game: str = "renature") -> list[str]:
    """``greedy,mcts`` -> one bot name per seat of ``game``; one name is used for every seat."""
    return game_commands.bot_names(game_commands.the_game(game), spec, players)


def simulate(
    players: Annotated[
        int | None,
        typer.Option(min=2, max=4, help="2, 3 or 4 players (Renature, default 4; Renaissance: 2)"),
    ] = None,
    seed: Annotated[str, typer.Option(help="the game seed: same seed, same game")] = "1",
    bots: Annotated[
        str, typer.Option(help="bots by seat, comma-separated: random, greedy, mcts")
    ] = ("greedy"),
    board: Annotated[str, typer.Option(help="base, valley or valley-back")] = "base",
    events_file: Annotated[
        Path | None, typer.Option("--events", help="write every event as JSON lines here")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
    game_name: game_commands.GameOpt = "renature",
    sets: Annotated[int, typer.Option(min=1, help="Renaissance: sets to play")] = 1,
    competition: Annotated[
        str, typer.Option(help="Renaissance: points or sets (the competition rule)")
    ] = "points",
) -> None:
    """Play a whole game with bots, in process. Same arguments, same output, byte for byte."""
    if game_name != "renature":
        options = {"sets": sets, "competition": competition}
        game_commands.simulate(game_name, players, seed, bots, events_file, as_json, options)
        return
    players = players or 4
    names = parse_bots(bots, players)
    if board not in boards.available_boards():
        raise typer.BadParameter(f"unknown board {board!r}; boards: {boards.available_boards()}")
    log, state = play(
        players, seed, names, board=board, make=game_commands.the_game(game_name).make_bot
    )
    if events_file is not None:
        with events_file.open("wb") as out:
            for event in log:
                out.write(events.encode(event) + b"\n")
    result = outcome(state, names, len(log))
    if as_json:
        sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
        return
    table = Table(title=f"Renature, {players} players, seed {seed!r}, board {board}")
    for column in ("rank", "seat", "colour", "bot", "score", "winner"):
        table.add_column(column)
    for rank, seat in enumerate(result.ranking, start=1):
        table.add_row(
            str(rank),
            str(seat),
            result.colours[seat],
            names[seat],
            str(result.scores[seat]),
            "yes" if seat in result.winners else "",
        )
    Console().print(table)
    Console().print(f"{result.events} events, game id {result.game_id}")


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
    game_name: game_commands.GameOpt = "renature",
) -> None:
    """Print the corpus of recorded games (JSON lines, as in docs/corpus.jsonl), or check a
    corpus file: every game is replayed, and the legal actions counted before each command
    and the result must be the recorded ones. Exit status 1 when any game differs."""
    from renature import corpus as recorded

    if game_name != "renature":
        game_commands.corpus(game_name, check_file)
        return
    if check_file is None:
        for board, players, bot in recorded.GAMES:
            game = recorded.record(board, players, bot)
            sys.stdout.write(msgspec.json.encode(game).decode() + "\n")
        return
    decoder = msgspec.json.Decoder(recorded.CorpusGame)
    differ = 0
    lines = [line for line in check_file.read_bytes().splitlines() if line.strip()]
    for number, line in enumerate(lines, start=1):
        try:
            game = decoder.decode(line)
        except msgspec.DecodeError as error:  # ValidationError included
            problems = [f"not a corpus game: {error}"]
            name = f"line {number}"
        else:
            problems = recorded.check(game)
            name = f"line {number} ({game.board}, {game.players} players, {game.seed!r})"
        for problem in problems:
            sys.stdout.write(f"{name}: {problem}\n")
        differ += bool(problems)
    sys.stdout.write(f"{len(lines) - differ} of {len(lines)} games agree\n")
    if differ or not lines:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(simulate)
    app.command()(schema)
    app.command()(corpus)
    app.add_typer(board_app, name="board")
