"""``--game``: the CLI's commands for any game of the platform, through its registry only.

``renature simulate|corpus|audit|explain|replay --game renaissance`` land here; Renature keeps
its own paths in ``core`` and ``audit`` (the default ``--game renature``), unchanged.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gameplatform import Game, UnknownGame, game_names, get_game

GameOpt = Annotated[str, typer.Option("--game", help=f"the game: {', '.join(game_names())}")]


def the_game(name: str) -> Game[Any, Any, Any]:
    try:
        return get_game(name)
    except UnknownGame as err:
        raise typer.BadParameter(str(err)) from None


def bot_names(game: Game[Any, Any, Any], spec: str, players: int) -> list[str]:
    names = [b.strip() for b in spec.split(",") if b.strip()]
    if len(names) == 1:
        names *= players
    unknown = [n for n in names if n not in game.bot_names]
    if unknown:
        raise typer.BadParameter(f"unknown bots {unknown}; bots: {', '.join(game.bot_names)}")
    if len(names) != players:
        raise typer.BadParameter(f"{players} players need {players} bots (or one for all)")
    return names


def simulate(
    name: str,
    players: int | None,
    seed: str,
    bots: str,
    events_file: Path | None,
    as_json: bool,
    options: dict[str, Any],
) -> None:
    game = the_game(name)
    players = players or game.player_counts[0]
    if players not in game.player_counts:
        raise typer.BadParameter(f"{game.title} is played by {game.player_counts} players")
    names = bot_names(game, bots, players)
    log, _, result = game.simulate(seed, names, None, options)
    if events_file is not None:
        with events_file.open("wb") as out:
            for event in log:
                out.write(game.encode_event(event) + b"\n")
    if as_json:
        sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
        return
    facts = msgspec.to_builtins(result)
    table = Table(title=f"{game.title}, seed {seed!r}")
    for column in ("rank", "seat", "colour", "bot", "score", "winner"):
        table.add_column(column)
    for rank, seat in enumerate(facts["ranking"], start=1):
        table.add_row(
            str(rank),
            str(seat),
            facts["colours"][seat],
            names[seat],
            str(facts["scores"][seat]),
            "yes" if seat in facts["winners"] else "",
        )
    Console().print(table)
    Console().print(f"{facts['events']} events, game id {facts['game_id']}")


def corpus(name: str, check_file: Path | None) -> None:
    game = the_game(name)
    if check_file is None:
        for recorded in game.corpus():
            sys.stdout.write(msgspec.json.encode(recorded).decode() + "\n")
        return
    differ = 0
    lines = [line for line in check_file.read_bytes().splitlines() if line.strip()]
    for number, line in enumerate(lines, start=1):
        try:
            label, problems = game.check_corpus_game(line)
        except msgspec.DecodeError as error:  # ValidationError included
            label, problems = "", [f"not a corpus game: {error}"]
        for problem in problems:
            where = f"line {number} ({label})" if label else f"line {number}"
            sys.stdout.write(f"{where}: {problem}\n")
        differ += bool(problems)
    sys.stdout.write(f"{len(lines) - differ} of {len(lines)} games agree\n")
    if differ or not lines:
        raise typer.Exit(1)


def explain(name: str, found: list[Any], as_json: bool) -> None:
    """The explanation of a game's events, as a table (or JSON)."""
    report = the_game(name).explain(found)
    if as_json:
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
        return
    facts = msgspec.to_builtins(report)
    table = Table(title=f"Where the points of game {escape(facts['game_id'])} came from")
    for column in ("event", "colour", "points", "total", "why"):
        table.add_column(column)
    for line in facts["lines"]:
        table.add_row(
            str(line["version"]),
            escape(line["colour"]),
            f"{line['points']:+d}",
            str(line["total"]),
            escape(line["text"]),
        )
    console = Console()
    console.print(table)
    for rank, who in enumerate(facts["ranking"], start=1):
        mark = " (winner)" if who in facts["winners"] else ""
        console.print(f"{rank}. seat {who}: {facts['scores'][who]} points{mark}")


def replay(name: str, found: list[Any], to: int | None, svg: Path | None) -> None:
    """The board after event ``to`` of a game's events, in the terminal (and as SVG)."""
    game = the_game(name)
    if to is not None:
        found = [ev for ev in found if ev.version <= to]
    state = game.replay(found)
    if state is None:
        raise typer.BadParameter("no events up to that number")
    console = Console()
    console.print(escape(game.picture_text(state)))
    console.print(f"After event {len(found)}")
    if svg is not None:
        svg.write_text(game.picture_svg(state, f"{game.title} after event {len(found)}"))
        console.print(f"SVG written to {svg}")
