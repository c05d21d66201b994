"""Limits that need no server: the JSON depth scan, bounded echoes, the rate-limit settings,
and seat-token redaction in log lines however the token's name is spelled."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from gameserver.gateway.http_errors import bounded
from gameserver.gateway.ratelimit import bearer_token, request_class, token_bucket
from gameserver.gateway.request_limits import json_depth_exceeds
from gameserver.runtime.logging import configure_logging
from gameserver.runtime.settings import Settings
from gameserver.runtime.settings_parts import RateLimits

TOKEN = "vLBvP4i8QZ_TjlHC4FiAjZwjJjy3yEgF4sK4Jn-2Bqk"


@pytest.mark.parametrize(
    ("body", "deep"),
    [
        (b'{"command_id": "a", "command": {"type": "EndTurn"}}', False),
        (b"[" * 16 + b"]" * 16, False),
        (b"[" * 17 + b"]" * 17, True),
        (b'{"a": "' + b"[" * 500 + b'"}', False),  # brackets inside a string do not count
        (b'{"a": "\\"' + b"[" * 500 + b'"}', False),  # nor after an escaped quote
        (b'{"a": "\\\\"' + b", " + b"[" * 17, True),  # an escaped backslash ends nothing
        (b"[" * 100_000, True),
        (b'"' * 50_000 + b"[" * 20, True),  # unbalanced quotes cannot hide nesting for long
    ],
)
def test_json_depth_is_measured_without_recursion(body: bytes, deep: bool) -> None:
    assert json_depth_exceeds(body, 16) is deep


def test_an_echo_of_client_input_is_bounded() -> None:
    assert bounded("short") == "short"
    long = bounded("x" * 1_000_000)
    assert len(long) < 200
    assert "999880 more characters" in long


def test_rate_limits_come_from_the_environment() -> None:
    assert Settings.from_env({}).limits == RateLimits()
    limits = Settings.from_env(
        {
            "RENATURE_RATE_LIMITS": "off",
            "RENATURE_LIMIT_CREATE": "5/minute",
            "RENATURE_LIMIT_LIVE_PER_GAME": "7",
        }
    ).limits
    assert (limits.enabled, limits.create, limits.live_per_game) == (False, "5/minute", 7)
    from gameserver.gateway.front_door import FrontDoor, uvicorn_options

    assert Settings.from_env({}).front_door == FrontDoor()
    env = {"RENATURE_HEADER_TIMEOUT_S": "2.5", "RENATURE_MAX_HEADERS": "9"}
    door = Settings.from_env(env).front_door
    assert (door.header_timeout_s, door.max_headers) == (2.5, 9)
    assert uvicorn_options(door)["proxy_headers"] is False  # gateway.client_address decides


def test_requests_are_sorted_into_classes_and_tokens_are_never_keys() -> None:
    def scope(method: str, path: str, token: str | None = None) -> dict[str, object]:
        headers = [] if token is None else [(b"authorization", f"Bearer {token}".encode())]
        return {"type": "http", "method": method, "path": path, "headers": headers}

    assert request_class(scope("POST", "/games"), None) == "create"
    assert request_class(scope("POST", "/games/g1/seats/2"), None) == "create"
    assert bearer_token(scope("POST", "/games/g1/commands", TOKEN)) == TOKEN
    named = token_bucket(TOKEN)
    assert TOKEN not in named
    # A token's request is a seat's only once the token resolved to a seat (the holder);
    # a made-up one is a read of its address.
    assert request_class(scope("POST", "/games/g1/commands", TOKEN), named) == "seat"
    assert request_class(scope("GET", "/games/g1/view", TOKEN), None) == "read"
    assert request_class(scope("GET", "/games/g1/audit"), None) == "read"
    assert request_class(scope("POST", "/disputes", TOKEN), named) == "dispute"
    live = {"type": "websocket", "headers": [], "query_string": f"token={TOKEN}".encode()}
    assert bearer_token(live) == TOKEN


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging("INFO", service="test")
    out = io.StringIO()
    handler = root.handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(out)
    yield out
    root.handlers, root.level = handlers, level


@pytest.mark.parametrize(
    "query",
    [
        f"%74oken={TOKEN}",
        f"after=0&%74%6F%6B%65%6E={TOKEN}",
        f"after=0&t%6fk%65n={TOKEN}",
        f"TOKEN={TOKEN}&after=1",
    ],
)
def test_a_token_under_a_percent_encoded_name_is_blanked(
    log_lines: io.StringIO, query: str
) -> None:
    """The server decodes ``%74oken`` to ``token`` and honours it, so redaction must too."""
    logging.getLogger("a.server").info(f'1.2.3.4:5 - "WebSocket /games/g1/live?{query}"')
    (line,) = [json.loads(text) for text in log_lines.getvalue().splitlines()]
    assert TOKEN not in json.dumps(line)
    assert "[redacted]" in line["event"]
