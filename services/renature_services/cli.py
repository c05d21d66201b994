"""The `renature` command."""

import typer

app = typer.Typer(help="Renature server: rules, simulation, services and audit.")


@app.callback()
def _root() -> None:
    """Renature server command line."""


def main() -> None:
    app()
