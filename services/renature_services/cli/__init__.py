"""The ``renature`` command: one entry point for everything a person runs."""

from __future__ import annotations

import typer

from renature_services.cli import audit, bots, core, serve

app = typer.Typer(
    help="Renature server: rules, simulation, services and audit.",
    no_args_is_help=True,
    add_completion=False,
)
core.register(app)
audit.register(app)
app.add_typer(serve.app, name="serve")
app.add_typer(bots.app, name="bots")


def main() -> None:
    app()
