"""``renature serve``: run one service, or the whole stack (``renature serve all``)."""

from __future__ import annotations

from typing import Annotated

import typer

from gameserver.runtime.settings import Settings

app = typer.Typer(
    help=(
        "Run the services: rules, models (the board and score projectors together), board, "
        "score, clock, retention, gateway, or all of them."
    ),
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
TrustedProxies = Annotated[
    str | None,
    typer.Option(
        "--trusted-proxies",
        help="Addresses or networks of the proxies in front of the gateway whose "
        "X-Forwarded-For names the client (e.g. 10.0.0.0/8,127.0.0.1); default: "
        "RENATURE_TRUSTED_PROXIES, else none.",
    ),
]
RebuildOnly = Annotated[
    bool, typer.Option("--rebuild-only", help="Drop and rebuild every read model, then exit.")
]


def _settings(redis_url: str | None, trusted_proxies: str | None = None) -> Settings:
    """The environment's settings with the command line's flags; exit 2 naming a bad value."""
    from gameserver.runtime.settings import SettingsError

    try:
        return Settings.from_env(redis_url=redis_url, trusted_proxies=_proxies(trusted_proxies))
    except SettingsError as error:
        typer.secho(str(error), err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from error


def _proxies(text: str | None) -> str | None:
    """``text`` when it names addresses or networks; exit 2 saying which word does not."""
    from gameserver.gateway.client_address import TrustedNetworks

    try:
        TrustedNetworks.parse(text or "")
    except ValueError as error:
        typer.secho(f"--trusted-proxies: {error}", err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from error
    return text


def _run(
    name: str, redis_url: str | None, trusted_proxies: str | None = None, **options: object
) -> None:
    from gameserver.runtime.supervisor import SupervisorError, run_service

    try:
        settings = _settings(redis_url, trusted_proxies)
        run_service(name, settings, **options)  # type: ignore[arg-type]
    except SupervisorError as error:
        typer.secho(str(error), err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from error


@app.command()
def rules(redis_url: RedisUrl = None) -> None:
    """The rules service: commands from the bus, events into the store, replies back."""
    _run("rules", redis_url)


@app.command()
def models(
    redis_url: RedisUrl = None, rebuild: Rebuild = False, rebuild_only: RebuildOnly = False
) -> None:
    """The board and score projectors in one consumer (what `serve all` runs): one read of
    the feeds and one write per game for both models."""
    _run("models", redis_url, rebuild=rebuild, rebuild_only=rebuild_only)


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
def gateway(
    redis_url: RedisUrl = None,
    host: Host = "127.0.0.1",
    port: Port = 8000,
    trusted_proxies: TrustedProxies = None,
) -> None:
    """The HTTP gateway (uvicorn)."""
    _run("gateway", redis_url, trusted_proxies, host=host, port=port)


@app.command("all")
def all_(
    redis_url: RedisUrl = None,
    host: Host = "127.0.0.1",
    port: Port = 8000,
    redis_port: Annotated[
        int | None,
        typer.Option(help="Port of the private redis-server (default: a free port)."),
    ] = None,
    trusted_proxies: TrustedProxies = None,
    instances: Annotated[
        int,
        typer.Option(
            help="Instances of the rules service and of the projectors, each reading its share"
            " of the partitions, and as many gateway workers (1 to 16).",
            min=1,
            max=16,
        ),
    ] = 1,
) -> None:
    """Everything, one process per service; without REDIS_URL a private redis-server too."""
    from gameserver.runtime.logging import configure_logging
    from gameserver.runtime.settings import variables
    from gameserver.runtime.shares import SharesError
    from gameserver.runtime.supervisor import SupervisorError, run_all

    settings = _settings(redis_url, trusted_proxies)
    # the children read their settings from the environment: the flags go there too
    flags = variables(trusted_proxies=trusted_proxies) if trusted_proxies is not None else {}
    configure_logging(settings.logging.log_level, service="supervisor")
    try:
        status = run_all(
            redis_url,
            settings,
            host=host,
            port=port,
            redis_port=redis_port,
            environment=flags,
            instances=instances,
            announce=typer.echo,
        )
    except (SupervisorError, SharesError) as error:
        typer.secho(str(error), err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from error
    raise typer.Exit(status)
