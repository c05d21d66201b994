"""`devkit.redis_server.free_port`: a port no outgoing connection can take before it is bound."""

from __future__ import annotations

import socket

import pytest

from devkit import redis_server
from devkit.redis_server import LOWEST_PORT, free_port


def test_a_free_port_is_outside_the_range_of_outgoing_connections_and_binds() -> None:
    low, high = redis_server._outgoing_ports()
    for _ in range(50):
        port = free_port()
        assert LOWEST_PORT <= port < low or high < port <= 65535
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", port))  # it is free


def test_a_port_in_use_is_never_given(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", free_port()))
        taken = held.getsockname()[1]
        # Only the held port and the one above it are outside the outgoing range now.
        monkeypatch.setattr(redis_server, "LOWEST_PORT", taken)
        monkeypatch.setattr(redis_server, "_outgoing_ports", lambda: (taken + 2, 65535))
        assert all(free_port() != taken for _ in range(20))
