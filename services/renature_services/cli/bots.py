"""``renature bots``: bots playing through the gateway (filled in by the gateway work)."""

import typer

app = typer.Typer(help="Bots that play whole games through the HTTP gateway.")
