"""Log lines are JSON and carry no secret, whoever writes them (structlog or a library)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable, Iterator

import pytest
from structlog.testing import capture_logs
from websockets.client import ClientProtocol
from websockets.http11 import Request
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from gameserver.runtime.logging import configure_logging, get_logger

Lines = Callable[[], list[dict[str, object]]]
"""The JSON lines written so far (the fixture ``lines``)."""

TOKEN = "vLBvP4i8QZ_TjlHC4FiAjZwjJjy3yEgF4sK4Jn-2Bqk"


@pytest.fixture
def lines() -> Iterator[Lines]:
    """The JSON lines the services' log configuration writes (to a buffer, not stdout)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging("INFO", service="test")
    out = io.StringIO()
    handler = root.handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(out)

    def read() -> list[dict[str, object]]:
        return [json.loads(line) for line in out.getvalue().splitlines()]

    yield read
    root.handlers, root.level = handlers, level


@pytest.mark.parametrize(
    "request_line",
    [
        f'127.0.0.1:48858 - "WebSocket /games/g1/live?token={TOKEN}&after=0" [accepted]',
        f'127.0.0.1:48858 - "GET /games/g1/live?after=3&token={TOKEN} HTTP/1.1" 403',
        f"Authorization: Bearer {TOKEN}",
        f'127.0.0.1:1 - "GET /games/g1/live?token=\'{TOKEN} HTTP/1.1" 403',  # a token after a quote
        f'127.0.0.1:1 - "GET /games/g1/live?token="{TOKEN}" HTTP/1.1" 403',
    ],
)
def test_a_seat_token_in_a_library_log_line_is_blanked(lines: Lines, request_line: str) -> None:
    """uvicorn logs every request line with its query string, and a browser can only send its
    seat token to the live channel in the query string (the e2e tests read the real logs)."""
    logging.getLogger("a.library").info(request_line)

    (line,) = lines()
    assert TOKEN not in json.dumps(line)
    assert "[redacted]" in str(line["event"])
    assert line["logger"] == "a.library"


def test_secret_keys_are_blanked_and_the_rest_is_kept(lines: Lines) -> None:
    get_logger("renature.test").info("dealt", seed="s3cr3t", hand=[1, 2], game_id="g1")

    (line,) = lines()
    assert (line["seed"], line["hand"], line["game_id"]) == ("[redacted]", "[redacted]", "g1")
    assert line["service"] == "test"


def test_the_password_of_a_url_is_masked_in_any_field(lines: Lines) -> None:
    """A Redis client's error or a setting may quote REDIS_URL with its password."""
    url = "redis://auditor:9f86d081884c7d65@redis:6379/0"
    get_logger("renature.test").warning("redis_unavailable", error=f"cannot reach {url}")
    logging.getLogger("a.library").error("connecting to %s", url)

    first, second = lines()
    assert first["error"] == "cannot reach redis://auditor:***@redis:6379/0"
    assert second["event"] == "connecting to redis://auditor:***@redis:6379/0"
    assert "9f86d081884c7d65" not in json.dumps([first, second])


def test_a_line_without_secrets_is_left_alone() -> None:
    with capture_logs() as logs:
        get_logger("renature.test").info("area token scored", token_count=3)
    assert logs == [{"event": "area token scored", "token_count": 3, "log_level": "info"}]


def websocket_lines() -> None:
    """The lines of one WebSocket on uvicorn's logger, as uvicorn's protocol writes them: its
    handshake line, then websockets' own as the socket opens and closes (the real library)."""
    log = logging.getLogger("uvicorn.error")
    client = ClientProtocol(parse_uri("ws://localhost/games/g1/live"))
    client.send_request(client.connect())
    server = ServerProtocol(logger=log)
    server.receive_data(b"".join(client.data_to_send()))
    (request,) = server.events_received()
    assert isinstance(request, Request)
    log.info('%s - "WebSocket %s" [accepted]', "127.0.0.1:5", f"/games/g1/live?token={TOKEN}")
    server.send_response(server.accept(request))
    client.receive_data(b"".join(server.data_to_send()))
    client.send_close()
    server.receive_data(b"".join(client.data_to_send()))
    server.receive_eof()


@pytest.mark.parametrize(("sample", "kept"), [(0.0, 0), (1.0, 3)])
def test_a_websockets_lines_are_access_lines_sampled_as_the_access_log(
    sample: float, kept: int
) -> None:
    """A socket's three INFO lines follow ``access_log_sample``, off by default as the access
    log is; uvicorn's other lines on the same logger are kept whatever it says."""
    root, server, out = logging.getLogger(), logging.getLogger("uvicorn.error"), io.StringIO()
    uvicorn = logging.getLogger("uvicorn")
    saved = root.handlers[:], root.level, server.filters[:], server.level
    kept_uvicorn = uvicorn.handlers[:], uvicorn.level, uvicorn.propagate
    try:
        # As the gateway runs it (``log_config=None``): uvicorn's loggers pass every line to
        # the root's handler. A test that ran uvicorn with its own logging config changed them.
        uvicorn.handlers, uvicorn.propagate = [], True
        uvicorn.setLevel(logging.NOTSET)
        server.setLevel(logging.NOTSET)
        configure_logging("INFO", service="test", access_log_sample=sample)
        handler = root.handlers[0]
        assert isinstance(handler, logging.StreamHandler)
        handler.setStream(out)
        websocket_lines()
        server.info("Started server process [%d]", 7)
    finally:
        root.handlers, root.level, server.filters, server.level = saved
        uvicorn.handlers, uvicorn.level, uvicorn.propagate = kept_uvicorn
    events = [str(json.loads(line)["event"]) for line in out.getvalue().splitlines()]
    assert events[-1] == "Started server process [7]"
    assert len(events) == kept + 1
    assert TOKEN not in "".join(events)
