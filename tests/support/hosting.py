"""Every hosted game as a test parameter, named by the registry (so that no test names a game):
the services create and play every game the registry lists, so each runs in full. And what the
tests that play any game through the `Game` protocol ask of it, with the Nones a test does not
expect checked."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import pytest

from gameplatform.chain import Event
from gameplatform.interface import HostedGame, HostedState
from gameserver.cli.gateway_client import GatewayClient


def hosted(names: Iterable[str]) -> list[Any]:
    """The games as test parameters, each with its name as the test's id."""
    return [pytest.param(name, id=name) for name in names]


def replayed(game: HostedGame, events: Sequence[Event]) -> HostedState:
    """The state after ``events`` (the test replays at least one)."""
    state = game.replay(events)
    assert state is not None, "no events to replay"
    return state


T = TypeVar("T")


async def state_as(client: GatewayClient, game_id: str, token: str, kind: type[T]) -> T:
    """The seat's state through the gateway as the game's own state type ``kind`` (the test
    knows which game it plays)."""
    state = await client.state(game_id, token)
    assert isinstance(state, kind), f"a {type(state).__name__}, not a {kind.__name__}"
    return state
