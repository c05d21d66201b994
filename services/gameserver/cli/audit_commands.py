"""``renature audit | explain | replay | export``: dispute tools over a game's stored events.

Exit status of each: 0 the audit holds (or the command did its work), 1 the audit fails (the
events are not a fair game, or not what the server signed), 2 nothing to work on (no game id or
file, no such game, no events, the store unreachable, a key that cannot be read), 3 the file
is not an event log (a line too long, nested too deep, not UTF-8, not JSON, not an event).
Nothing printed repeats a password (a Redis URL's is masked) or more than a little of a file's
values, and nothing a file says is read as terminal markup or highlighted (rich's highlighter
takes minutes over a megabyte)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, TypeVar

import msgspec
import typer
from rich.console import Console
from rich.markup import escape

from gameserver.cli import game_commands
from gameserver.cli.event_source import clipped

T = TypeVar("T")
GameArg = Annotated[str | None, typer.Argument(help="game id in Redis (or use --events)")]
if TYPE_CHECKING:
    from gameserver.cli.event_source import Loaded

EventsOpt = Annotated[
    Path | None, typer.Option("--events", help="JSON-lines file of events instead of Redis")
]
RedisOpt = Annotated[str | None, typer.Option(help="Redis URL (default: REDIS_URL)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="machine-readable JSON")]

EXIT_FAILS = 1
EXIT_NOTHING = 2
EXIT_UNREADABLE = 3


def console(*, stderr: bool = False) -> Console:
    """A console that prints a file's text as it is: no highlighting, no markup in values."""
    return Console(stderr=stderr, highlight=False)


def complain(message: str, code: int) -> NoReturn:
    """Print ``message`` (URL passwords masked) on standard error and exit with ``code``."""
    from gameserver.runtime.redis_auth import redact_urls

    console(stderr=True).print(f"[red]{escape(redact_urls(message))}[/red]")
    raise typer.Exit(code)


GameCheck = Annotated[
    str | None,
    typer.Option("--game", help="refuse a game of any other game (read from its first event)"),
]


def _events(
    game_id: str | None, events_file: Path | None, redis_url: str | None, game: str | None = None
) -> Loaded:
    """The game's events and its game: a stored game's or a file's own (its first event names
    it); ``--game``, where given, must be that game."""
    from gameserver.cli.event_source import load

    return _reading(lambda: load(game_id, events_file, redis_url, game))


def _reading(read: Callable[[], T]) -> T:
    """What ``read`` reads, or the exit of the CLI that says why it cannot be read."""
    # Imported here: redis takes a third of a second to import, and most commands never need it.
    from eventstore import StoreError
    from gameserver.cli.event_source import NoSuchGame, UnreadableFile

    try:
        return read()
    except UnreadableFile as err:
        complain(str(err), EXIT_UNREADABLE)
    except (NoSuchGame, OSError) as err:
        complain(str(err), EXIT_NOTHING)
    except (msgspec.DecodeError, msgspec.ValidationError) as err:  # a stored game's events
        complain(f"Cannot read the stored events: {err}", EXIT_NOTHING)
    except StoreError as err:  # Redis cannot be reached, or the stream is corrupt
        complain(f"Cannot read the event store: {err}", EXIT_NOTHING)


KeyOpt = Annotated[
    Path | None,
    typer.Option(
        "--key",
        help="the server's public key (PEM, or its /.well-known/renature-keys.json): the "
        "--events file must carry the server's seal and hold exactly the events it signed",
    ),
]


def audit(
    game_id: GameArg = None,
    events_file: EventsOpt = None,
    redis_url: RedisOpt = None,
    as_json: JsonOpt = False,
    game_name: GameCheck = None,
    key: KeyOpt = None,
) -> None:
    """Verify a game from its events alone: hash chain, every move re-decided, seed and deal,
    final scoring; with ``--key``, first that the file is what the server signed. Exit status
    0 when everything holds, 1 when not, 2 with nothing to audit, 3 for a file that is not an
    event log."""
    if key is not None:
        check_signed(events_file, key, quiet=as_json)
    loaded = _events(game_id, events_file, redis_url, game_name)
    report = game_commands.the_game(loaded.game).audit(loaded.events)
    if as_json:
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
    else:
        out = console()
        verdict = "[green]holds[/green]" if report.ok else "[red]FAILS[/red]"
        out.print(
            f"Audit of game {escape(clipped(report.game_id))}: {verdict} "
            f"({report.events} events, {report.batches} commands)"
        )
        for check in report.checks:
            out.print(f"  checked: {check}")
        if report.first_bad is not None:
            bad = report.first_bad
            # messages quote stored values, which a forger chose: never read them as markup
            out.print(
                f"[red]First bad event: number {bad.version} ({bad.check}): "
                f"{escape(clipped(bad.message, 400))}[/red]"
            )
            for more in report.findings[1:6]:
                text = escape(clipped(more.message, 400))
                out.print(f"  also event {more.version} ({more.check}): {text}")
        elif report.finished:
            out.print(f"  final scores {report.scores}, winners {report.winners}")
        else:
            out.print("  the game is not finished: the deal is checked once the seed is revealed")
    raise typer.Exit(0 if report.ok else EXIT_FAILS)


def check_signed(events_file: Path | None, key: Path, *, quiet: bool) -> None:
    """Exit 1 unless ``events_file`` carries a seal that ``key`` verifies and holds the very
    events the seal signed (naming the first event that differs)."""
    from gameserver.cli.event_source import UnreadableFile, read_signed
    from gameserver.runtime import signing

    if events_file is None:
        complain("--key checks a file: give it with --events.", EXIT_NOTHING)
    try:
        keys = signing.read_public_keys(key.read_bytes())
    except (OSError, ValueError) as err:
        complain(f"Cannot read the key {key}: {err}", EXIT_NOTHING)
    try:
        lines, seal = read_signed(events_file)
    except UnreadableFile as err:
        complain(str(err), EXIT_UNREADABLE)
    except OSError as err:
        complain(str(err), EXIT_NOTHING)
    found = signing.verdict(seal, keys, lines)
    if found.status != "signed":
        complain(f"Not what the server signed: {found.message}.", EXIT_FAILS)
    if not quiet:
        later = len(lines) - found.signed_events
        console().print(
            f"Signed by the server (key {found.key_id}): events 1 to {found.signed_events} are "
            "the ones it signed"
            + (f"; the {later} events after them are not signed." if later else ".")
        )


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
    """Write a game's event log as JSON lines (the input of ``renature audit --events``): its
    events as the server stored them, from Redis or the archive, and the server's latest seal
    of it as a last line when the server signs its games."""
    import asyncio

    from gameserver.cli.event_source import read_export
    from gameserver.runtime.settings import Settings

    settings = Settings.from_env(redis_url=redis_url)
    data = _reading(lambda: asyncio.run(read_export(game_id, settings)))
    if out is None:
        sys.stdout.buffer.write(data)
    else:
        out.write_bytes(data)


def register(app: typer.Typer) -> None:
    for command in (audit, explain, replay, export):
        app.command()(command)
