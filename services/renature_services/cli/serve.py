"""``renature serve``: run the services (filled in by the services work)."""

import typer

app = typer.Typer(help="Run the services: rules, board, score, gateway, or all of them.")
