"""The ``renature`` command: one entry point for everything a person runs."""

from __future__ import annotations

import typer

from gameserver.cli import (
    audit_commands,
    bot_commands,
    feed_commands,
    local_commands,
    seal_commands,
    serve_commands,
)

app = typer.Typer(
    help="Renature server: rules, simulation, services and audit.",
    no_args_is_help=True,
    add_completion=False,
)
local_commands.register(app)
audit_commands.register(app)
seal_commands.register(app)
app.add_typer(serve_commands.app, name="serve")
app.add_typer(bot_commands.app, name="bots")
app.add_typer(feed_commands.app, name="feeds")


def main() -> None:
    app()
