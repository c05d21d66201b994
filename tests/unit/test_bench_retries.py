"""The load generator's retries (`bench.loadgen.retried`): what a well-behaved client does with
a 504 and with a 409 ``idempotency_key_in_flight``."""

from __future__ import annotations

from typing import Any

import pytest
from bench import loadgen


class Answers:
    """A connection that answers from a list (a unit test's stand-in for the gateway)."""

    def __init__(self, *answers: tuple[int, bytes]) -> None:
        self.answers = list(answers)
        self.sent = 0

    async def request(self, *_: Any) -> tuple[int, bytes]:
        self.sent += 1
        return self.answers.pop(0)


IN_FLIGHT = (409, b'{"error":{"code":"idempotency_key_in_flight"}}')


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loadgen, "IN_FLIGHT_WAIT_S", 0.0)


def load() -> Any:
    return loadgen.Load(config={}, pool=[], redis=None, layout=None)


async def test_a_key_in_flight_is_asked_again_past_the_timeouts_retries() -> None:
    """More in-flight answers than `RETRIES`: the request is sent until its first try has
    been answered (a 201 here), not given up after a few (the bench's set-up failed so)."""
    conn = Answers((504, b""), *[IN_FLIGHT] * (loadgen.RETRIES + 3), (201, b"{}"))
    assert await loadgen.retried(load(), conn, "POST", "/games", key="k") == (201, b"{}")  # type: ignore[arg-type]
    assert conn.sent == loadgen.RETRIES + 5


async def test_timeouts_are_sent_again_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    conn = Answers(*[(504, b"")] * (loadgen.RETRIES + 1), (201, b"{}"))
    assert await loadgen.retried(load(), conn, "POST", "/x") == (504, b"")  # type: ignore[arg-type]
    monkeypatch.setattr(loadgen, "IN_FLIGHT_PATIENCE_S", 0.0)
    conn = Answers(IN_FLIGHT, (201, b"{}"))  # no patience left: the 409 is the answer
    assert await loadgen.retried(load(), conn, "POST", "/x", key="k") == IN_FLIGHT  # type: ignore[arg-type]
