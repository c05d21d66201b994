"""The bench's floor under the gateway over the WebSocket (`bench.floor`): its minimal live
server, stand-in rules and load really play moves on a real Redis, every seat reads every
move's event, and the server's CPU a move is measured."""

from __future__ import annotations

import pytest
from bench import floor

pytestmark = pytest.mark.redis


def test_the_minimal_server_answers_every_move_and_pushes_to_every_seat() -> None:
    games, window_s = 2, 1.0
    # no warm-up: the window begins with every game's first move, which the server answers
    # (subscribed to the replies before it serves; a reply published before was never heard)
    measured = floor.measure(games=games, seats=3, warm_s=0.0, window_s=window_s)
    assert measured.rate > 0
    assert measured.server_ms > 0
    # each move's event reached every seat's socket, the mover's included: the seat that read
    # the fewest read at least half an even share of the window's moves (games run unevenly)
    even_share = measured.rate * window_s / games
    assert measured.pushes >= even_share / 2
    assert measured.errors == ""


def test_seats_that_leave_as_the_load_ends_are_no_error_of_the_minimal_server() -> None:
    """At the window's end the load closes every seat's socket while the server may still be
    writing a push or an answer to it: the server drops those writes quietly, and what its
    processes write to stderr is kept for `floor_line` to show (empty here)."""
    for _ in range(3):  # the closing races the writes: not every window catches one
        measured = floor.measure(games=16, seats=3, warm_s=0.2, window_s=0.5)
        assert measured.errors == ""
    assert floor.floor_line(floor.Floor(1.0, 0.1, 0.1, 1, "Traceback ...")).endswith(
        "pushes at least); its processes' errors:\nTraceback ..."
    )


def test_the_comparison_says_how_far_the_gateway_and_the_target_are_from_the_floor() -> None:
    floors = [floor.Floor(1000.0, 0.2, 0.1, 10), floor.Floor(1000.0, 0.3, 0.1, 10)]
    line = floor.compared(0.5, floors)
    assert "0.500 ms of CPU a move, 2.00x the floor's 0.250 ms" in line
    assert "the platform's own work: 0.250 ms a move" in line
    assert "the target, 0.25 ms, is 1.00x the floor" in line
