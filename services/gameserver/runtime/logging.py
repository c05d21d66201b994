"""Structured JSON logs for every service, with secrets redacted.

Every line is one JSON object on stdout. ``game_id``, ``command_id`` and ``seat`` (with
``seat_name``, the seat as its game names it, where the service holds the game) are bound per
command with contextvars (`bind_command`), so every line written while a command is handled
carries them, including lines of FastStream and redis-py, which log through the standard
library and are rendered by the same formatter.

Secrets never reach a log line: the seed of a game (until it is revealed, and even then it
belongs to the events, not to the logs), hands, reserves and the deal. Code must not log them in
the first place (log the command *type*, never the command); `redact_secrets` is the safety
net for keys with those names. Seat tokens are secrets too: a browser opens the live channel
with ``?token=...`` (it cannot set a header), and uvicorn logs every request line with its query
string, so `redact_secrets` also blanks a token in the text of a line.

What a line costs must not grow with the traffic: accepted commands are logged at DEBUG (the
event store records each with its provenance), and uvicorn's access log, a line per request,
is off unless ``access_log_sample`` asks for every request (1.0) or a sample of them
(`SampledFilter`, e.g. 0.01: one request in a hundred, chosen at random). A WebSocket's lines
are access lines too, and sampled alike (`ConnectionLines`): uvicorn's handshake line and
websockets' ``connection open`` and ``connection closed``, three INFO lines a socket, 1% of the
gateway's CPU at 256 games over the WebSocket in `make bench`.
"""

from __future__ import annotations

import logging
import random
import re
import sys
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

import structlog
from structlog.typing import Processor

from gameserver.runtime.redis_auth import redact_urls

SECRET_KEYS = frozenset({"seed", "seeds", "hand", "hands", "reserve", "reserves", "deal"})
NOISE_KEYS = ("color_message",)  # uvicorn's ANSI-coloured duplicate of the message
REDACTED = "[redacted]"
_TOKEN_NAME = "".join(f"(?:{letter}|%{ord(letter):02x})" for letter in "token")
TOKEN_IN_TEXT = re.compile(rf"([?&;]{_TOKEN_NAME}=|Bearer )[^&\s#;]+", re.IGNORECASE)
"""A seat token in a request line (``?token=...``, also with its name percent-encoded, as in
``?%74oken=``, which the server decodes to ``token``) or an ``Authorization`` header value;
the value runs to the next separator, quotes included (``?token='X`` is blanked whole)."""


def redact_secrets(_: Any, __: str, event_dict: MutableMapping[str, Any]) -> Any:
    """Replace the value of any key that names a secret (see `SECRET_KEYS`), any seat token
    in the text of the line (see `TOKEN_IN_TEXT`) and the password of any URL
    (`redact_urls`)."""
    for key in SECRET_KEYS.intersection(event_dict):
        event_dict[key] = REDACTED
    message = event_dict.get("event")
    if isinstance(message, str) and ("=" in message or "Bearer " in message):
        event_dict["event"] = TOKEN_IN_TEXT.sub(rf"\1{REDACTED}", message)
    for key, value in event_dict.items():  # a URL's password (an error quoting REDIS_URL)
        if isinstance(value, str) and "://" in value:
            event_dict[key] = redact_urls(value)
    for key in NOISE_KEYS:
        event_dict.pop(key, None)
    return event_dict


def _shared_processors() -> list[Processor]:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        redact_secrets,
    ]


class SampledFilter(logging.Filter):
    """Lets through a random ``rate`` of the records (1.0: all, 0.0: none)."""

    def __init__(self, rate: float) -> None:
        super().__init__()
        self.rate = rate

    def filter(self, record: logging.LogRecord) -> bool:
        return self.rate >= 1.0 or random.random() < self.rate


class ConnectionLines(logging.Filter):
    """Samples a WebSocket's own lines, as `SampledFilter` samples the access log; lets
    every other line through."""

    LINES = ('%s - "WebSocket %s"', "connection open", "connection closed")
    """uvicorn's handshake line (its format: ``[accepted]`` or the status of a refusal), and
    the lines websockets writes on uvicorn's logger when a socket opens and closes."""

    def __init__(self, rate: float) -> None:
        super().__init__()
        self.sampled = SampledFilter(rate)

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.LINES) or self.sampled.filter(record)


ACCESS_LOGGER = "uvicorn.access"
SERVER_LOGGER = "uvicorn.error"
"""uvicorn's own lines, and websockets' (uvicorn hands it this logger)."""


def configure_logging(
    level: str = "INFO", service: str | None = None, *, access_log_sample: float | None = None
) -> None:
    """Send structlog and standard-library logs to stdout as JSON lines.

    Idempotent: calling it again replaces the root handler instead of adding a second one.
    ``service`` is bound globally so lines of several processes can be told apart.
    ``access_log_sample`` (0.0 to 1.0) keeps that share of uvicorn's access lines; None leaves
    the access logger alone.
    """
    shared = _shared_processors()
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,  # drop disabled levels before any work
            *shared,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[structlog.stdlib.ExtraAdder(), *shared],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
    )
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level.upper())
    if service:
        structlog.contextvars.bind_contextvars(service=service)
    if access_log_sample is not None:
        rate = max(0.0, access_log_sample)
        access, server = logging.getLogger(ACCESS_LOGGER), logging.getLogger(SERVER_LOGGER)
        access.filters = [f for f in access.filters if not isinstance(f, SampledFilter)]
        server.filters = [f for f in server.filters if not isinstance(f, ConnectionLines)]
        if rate < 1.0:
            access.addFilter(SampledFilter(rate))
            server.addFilter(ConnectionLines(rate))


Logger = structlog.stdlib.BoundLogger
"""What `get_logger` gives: the wrapper class `configure_logging` installs (until it runs,
structlog's lazy proxy, which answers the same calls)."""


def get_logger(name: str) -> Logger:
    """A structlog logger, named."""
    logger: Logger = structlog.get_logger(name)
    return logger


def debugging(name: str) -> bool:
    """Whether the DEBUG lines of the logger ``name`` are written (read per call, cached by
    `logging`): a line per move is DEBUG, and a DEBUG line dropped still costs structlog's
    processing (a copy of the context, the level filter), more than this test, on every move."""
    return logging.getLogger(name).isEnabledFor(logging.DEBUG)


def stdlib_logger(name: str) -> logging.Logger:
    """A standard-library logger for libraries that want one (FastStream), JSON-rendered."""
    return logging.getLogger(name)


@contextmanager
def bind_command(
    game_id: str, command_id: str, seat: int | None, seat_name: str | None = None
) -> Iterator[None]:
    """Bind the command's identity to every log line written inside the block: the seat's
    number and, where the caller knows the game, its name as the players see it."""
    names = {} if seat_name is None else {"seat_name": seat_name}
    with structlog.contextvars.bound_contextvars(
        game_id=game_id, command_id=command_id, seat=seat, **names
    ):
        yield
