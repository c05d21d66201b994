"""The CLI's commands for any game of the platform, through its registry only: one path for
every game (``simulate|corpus --game NAME``; ``audit|explain|replay`` read a file's or a stream's
game from its first event)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import msgspec
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gameplatform import UnknownGame, game_names, get_game
from gameplatform.chain import Event
from gameplatform.creation import CreationError, options_dict, options_of
from gameplatform.interface import HostedGame, JsonValue, Outcome
from gameplatform.registry import DEFAULT_GAME
from gameserver.cli.event_source import clipped

GameOpt = Annotated[
    str,
    typer.Option("--game", help=f"the game: {', '.join(game_names())} (default {DEFAULT_GAME})"),
]
PlayersOpt = Annotated[int | None, typer.Option(help="how many players (default: the game's most)")]
SeedOpt = Annotated[str, typer.Option(help="the game seed: same seed, same game")]
BotsOpt = Annotated[str, typer.Option(help="bots by seat, comma-separated: random, greedy, mcts")]
BoardOpt = Annotated[str | None, typer.Option(help="one of the game's boards (default: its first)")]


def the_game(name: str) -> HostedGame:
    try:
        return get_game(name)
    except UnknownGame as err:
        raise typer.BadParameter(str(err)) from None


def bot_names(game: HostedGame, spec: str, players: int) -> list[str]:
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
    seed: str,
    bots: str,
    *,
    players: int | None = None,
    board: str | None = None,
    options: dict[str, JsonValue] | None = None,
) -> tuple[list[Event], Outcome, list[str]]:
    """A whole bot game of game ``name``: its events, outcome and bots. What the game does not
    take (a player count, a board, an option or an option's value) is refused, naming it."""
    game = the_game(name)
    players = players or max(game.player_counts)
    if players not in game.player_counts:
        counts = ", ".join(map(str, game.player_counts))
        raise typer.BadParameter(f"A {game.name} game is played by {counts} players.")
    board = board or game.boards[0]
    if board not in game.boards:
        raise typer.BadParameter(
            f"A {game.name} game has no board {board!r}; its boards: {', '.join(game.boards)}."
        )
    try:
        chosen = options_of(game, {k: v for k, v in (options or {}).items() if v is not None})
    except CreationError as error:
        raise typer.BadParameter(str(error)) from None
    names = bot_names(game, bots, players)
    log, _, result = game.simulate(seed, names, board, options_dict(chosen))
    return log, result, names


def print_outcome(result: Outcome, names: list[str], title: str) -> None:
    facts = msgspec.to_builtins(result)
    table = Table(title=title)
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


def points(count: int) -> str:
    return f"{count} point" if abs(count) == 1 else f"{count} points"


STANDARD_COLUMNS = ("version", "seat", "colour", "points", "total", "rule", "text")
"""The fields of every game's explanation line; a game's others (a turn, a set) are shown too."""


def explain(game: HostedGame, events: list[Event], seat: str | None, as_json: bool) -> None:
    """The explanation of a game's events, as a table (or JSON); ``seat`` by its colour."""
    state = game.replay(events)
    seat_no = None
    if seat is not None and state is not None:
        colours = game.table(state).colours
        if seat not in colours:
            raise typer.BadParameter(f"no seat plays {seat!r}; colours: {', '.join(colours)}")
        seat_no = colours.index(seat)
    report = game.explain(events, seat_no)
    if as_json:
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
        return
    facts = msgspec.to_builtins(report)
    lines = facts["lines"]
    extra = [key for key in (lines[0] if lines else {}) if key not in STANDARD_COLUMNS]
    table = Table(title=f"Where the points of game {escape(clipped(facts['game_id']))} came from")
    for column in ("event", *extra, "colour", "points", "total", "why"):
        table.add_column(column)
    for line in lines:
        table.add_row(
            str(line["version"]),
            *(escape(str(line[key])) for key in extra),
            escape(line["colour"]),
            f"{line['points']:+d}",
            str(line["total"]),
            escape(line["text"]),
        )
    console = Console(highlight=False)  # a file's values are printed as they are
    console.print(table)
    for rank, who in enumerate(facts["ranking"], start=1):
        mark = " (winner)" if who in facts["winners"] else ""
        console.print(f"{rank}. {facts['colours'][who]}: {points(facts['scores'][who])}{mark}")


def replay(game: HostedGame, found: list[Event], to: int | None, svg: Path | None) -> None:
    """The board after event ``to`` of a game's events, in the terminal (and as SVG)."""
    if to is not None:
        found = [ev for ev in found if ev.version <= to]
    state = game.replay(found)
    if state is None:
        raise typer.BadParameter("no events up to that number")
    table = game.table(state)
    console = Console(highlight=False)  # a file's values are printed as they are
    console.print(escape(game.picture_text(state)))
    scores = ", ".join(
        f"{colour} {score}" for colour, score in zip(table.colours, table.scores, strict=True)
    )
    console.print(f"After event {table.version} ({game.progress(state)}): {scores}")
    if svg is not None:
        title = f"{game.title}: game {clipped(table.game_id)} after event {table.version}"
        svg.write_text(game.picture_svg(state, title))
        console.print(f"SVG written to {svg}")
