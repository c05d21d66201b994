"""``renature audit | explain | replay | export``: dispute tools over a game's stored events."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec
import typer
from rich.console import Console
from rich.markup import escape

from gameserver.cli import game_commands

GameArg = Annotated[str | None, typer.Argument(help="game id in Redis (or use --events)")]
if TYPE_CHECKING:
    from gameserver.cli.event_source import Loaded

EventsOpt = Annotated[
    Path | None, typer.Option("--events", help="JSON-lines file of events instead of Redis")
]
RedisOpt = Annotated[str | None, typer.Option(help="Redis URL (default: REDIS_URL)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="machine-readable JSON")]


GameCheck = Annotated[
    str | None,
    typer.Option("--game", help="refuse a game of any other game (read from its first event)"),
]


def _events(
    game_id: str | None, events_file: Path | None, redis_url: str | None, game: str | None = None
) -> Loaded:
    """The game's events and its game: a stored game's or a file's own (its first event names
    it); ``--game``, where given, must be that game."""
    # Imported here: redis takes a third of a second to import, and most commands never need it.
    from eventstore import StoreError
    from gameserver.cli.event_source import NoSuchGame, load

    try:
        return load(game_id, events_file, redis_url, game)
    except (NoSuchGame, OSError, msgspec.DecodeError, msgspec.ValidationError) as err:
        Console(stderr=True).print(f"[red]{escape(str(err))}[/red]")
        raise typer.Exit(2) from None
    except StoreError as err:  # Redis cannot be reached, or the stream is corrupt
        Console(stderr=True).print(f"[red]Cannot read the event store: {escape(str(err))}[/red]")
        raise typer.Exit(2) from None


def audit(
    game_id: GameArg = None,
    events_file: EventsOpt = None,
    redis_url: RedisOpt = None,
    as_json: JsonOpt = False,
    game_name: GameCheck = None,
) -> None:
    """Verify a game from its events alone: hash chain, every move re-decided, seed and deal,
    final scoring. Exit status 0 when everything holds, 1 otherwise."""
    loaded = _events(game_id, events_file, redis_url, game_name)
    report: Any = game_commands.the_game(loaded.game).audit(loaded.events)  # each game's report
    if as_json:
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
    else:
        console = Console()
        verdict = "[green]holds[/green]" if report.ok else "[red]FAILS[/red]"
        console.print(
            f"Audit of game {escape(report.game_id)}: {verdict} "
            f"({report.events} events, {report.batches} commands)"
        )
        for check in report.checks:
            console.print(f"  checked: {check}")
        if report.first_bad is not None:
            bad = report.first_bad
            # messages quote stored values, which a forger chose: never read them as markup
            console.print(
                f"[red]First bad event: number {bad.version} ({bad.check}): "
                f"{escape(bad.message)}[/red]"
            )
            for more in report.findings[1:6]:
                console.print(f"  also event {more.version} ({more.check}): {escape(more.message)}")
        elif report.finished:
            console.print(f"  final scores {report.scores}, winners {report.winners}")
        else:
            console.print(
                "  the game is not finished: the deal is checked once the seed is revealed"
            )
    raise typer.Exit(0 if report.ok else 1)


def explain(
    game_id: GameArg = None,
    events_file: EventsOpt = None,
    seat: Annotated[str | None, typer.Option(help="only this colour's points")] = None,
    redis_url: RedisOpt = None,
    as_json: JsonOpt = False,
    game_name: GameCheck = None,
) -> None:
    """Every point each seat got, in order, with the rule and the running total; then the
    final ranking."""
    game, events = _events(game_id, events_file, redis_url, game_name)
    game_commands.explain(game_commands.the_game(game), events, seat, as_json)


def replay(
    game_id: GameArg = None,
    events_file: EventsOpt = None,
    to: Annotated[
        int | None, typer.Option("--to", help="after event number N (default: all)")
    ] = None,
    svg: Annotated[Path | None, typer.Option(help="also write the board as an SVG picture")] = None,
    redis_url: RedisOpt = None,
    game_name: GameCheck = None,
) -> None:
    """The board and scores after event number N, drawn in the terminal (and as SVG)."""
    game, events = _events(game_id, events_file, redis_url, game_name)
    game_commands.replay(game_commands.the_game(game), events, to, svg)


def export(
    game_id: Annotated[str, typer.Argument(help="game id in Redis")],
    out: Annotated[
        Path | None, typer.Option(help="file to write (default: standard output)")
    ] = None,
    redis_url: RedisOpt = None,
) -> None:
    """Write a game's event log as JSON lines (the input of ``renature audit --events``)."""
    game, events = _events(game_id, None, redis_url)
    encode = game_commands.the_game(game).encode_event
    data = b"".join(encode(ev) + b"\n" for ev in events)
    if out is None:
        sys.stdout.buffer.write(data)
    else:
        out.write_bytes(data)


def register(app: typer.Typer) -> None:
    for command in (audit, explain, replay, export):
        app.command()(command)
