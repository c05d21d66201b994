"""``python -m gameserver.gateway``: serve the gateway with uvicorn.

Reads the common settings from the environment (``REDIS_URL``, ``RENATURE_LOG_LEVEL``); the
listening address comes from the flags. ``renature serve gateway`` is the usual way to run it;
this entry point needs nothing but the package.
"""

from __future__ import annotations

import argparse

from gameserver.runtime.settings import Settings
from gameserver.runtime.supervisor import run_gateway


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the game server's gateway.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    run_gateway(Settings.from_env(), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
