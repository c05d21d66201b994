"""``renature serve``: run one service, or the whole stack (``renature serve all``)."""

from __future__ import annotations

from typing import Annotated

import typer

from gameserver.runtime.settings import Settings

app = typer.Typer(
    help="Run the services: rules, board, score, clock, retention, gateway, or all of them.",
    no_args_is_help=True,
)

RedisUrl = Annotated[
    str | None,
    typer.Option(
        "--redis-url", envvar="REDIS_URL", help="Redis to use (default redis://127.0.0.1:6379/0)."
    ),
]
Host = Annotated[str, typer.Option(help="Interface the gateway listens on.")]
Port = Annotated[int, typer.Option(help="Port the gateway listens on.")]
Rebuild = Annotated[
    bool, typer.Option("--rebuild", help="Drop and rebuild every read model first, then serve.")
]
RebuildOnly = Annotated[
    bool, typer.Option("--rebuild-only", help="Drop and rebuild every read model, then exit.")
]


def _settings(redis_url: str | None) -> Settings:
    return Settings.from_env(redis_url=redis_url)


def _run(name: str, redis_url: str | None, **options: object) -> None:
    from gameserver.runtime.supervisor import SupervisorError, run_service

    try:
        run_service(name, _settings(redis_url), **options)  # type: ignore[arg-type]
    except SupervisorError as error:
        typer.secho(str(error), err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from error


@app.command()
def rules(redis_url: RedisUrl = None) -> None:
    """The rules service: commands from the bus, events into the store, replies back."""
    _run("rules", redis_url)


@app.command()
def board(
    redis_url: RedisUrl = None, rebuild: Rebuild = False, rebuild_only: RebuildOnly = False
) -> None:
    """The board projector: spectator board models per game."""
    _run("board", redis_url, rebuild=rebuild, rebuild_only=rebuild_only)


@app.command()
def score(
    redis_url: RedisUrl = None, rebuild: Rebuild = False, rebuild_only: RebuildOnly = False
) -> None:
    """The score projector: running scores with a breakdown by source per game."""
    _run("score", redis_url, rebuild=rebuild, rebuild_only=rebuild_only)


@app.command()
def clock(redis_url: RedisUrl = None) -> None:
    """The clock service: claims a timeout when a seat's time is up (games with a clock)."""
    _run("clock", redis_url)


@app.command()
def retention(redis_url: RedisUrl = None) -> None:
    """The retention service: expires lobbies, compacts and archives finished games, trims
    acknowledged stream entries, removes idle consumers (docs/security.md)."""
    _run("retention", redis_url)


@app.command()
def gateway(redis_url: RedisUrl = None, host: Host = "127.0.0.1", port: Port = 8000) -> None:
    """The HTTP gateway (uvicorn)."""
    _run("gateway", redis_url, host=host, port=port)


@app.command("all")
def all_(
    redis_url: RedisUrl = None,
    host: Host = "127.0.0.1",
    port: Port = 8000,
    redis_port: Annotated[
        int | None,
        typer.Option(help="Port of the private redis-server (default: a free port)."),
    ] = None,
) -> None:
    """Everything, one process per service; without REDIS_URL a private redis-server too."""
    from gameserver.runtime.logging import configure_logging
    from gameserver.runtime.supervisor import SupervisorError, run_all

    configure_logging(_settings(redis_url).log_level, service="supervisor")
    try:
        status = run_all(
            redis_url, host=host, port=port, redis_port=redis_port, announce=typer.echo
        )
    except SupervisorError as error:
        typer.secho(str(error), err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from error
    raise typer.Exit(status)
