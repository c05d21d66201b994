"""``python -m renature_services.gateway``: serve the gateway with uvicorn.

Reads the common settings from the environment (``REDIS_URL``, ``RENATURE_LOG_LEVEL``); the
listening address comes from the flags. ``renature serve gateway`` is the usual way to run it;
this entry point needs nothing but the package.
"""

from __future__ import annotations

import argparse

import uvicorn

from renature_services.gateway.app import create_app
from renature_services.logging import configure_logging
from renature_services.settings import Settings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the Renature gateway.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    configure_logging(settings.log_level, service="gateway")
    uvicorn.run(
        create_app(settings.redis_url, prefix=settings.prefix, partitions=settings.partitions),
        host=args.host,
        port=args.port,
        log_config=None,  # keep the JSON logging configured above
        ws="websockets-sansio",
    )


if __name__ == "__main__":
    main()
