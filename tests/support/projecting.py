"""Helpers of the projector tests: games appended batch by batch as the rules service appends
them, a projector drained, the board model a fresh replay gives."""

from __future__ import annotations

from typing import Any

from eventstore import RedisEventStore
from eventstore.types import AppendRequest
from gameserver.projectors import Projector
from gameserver.projectors.board_projection import board_model
from gameserver.projectors.projector_runner import json_encoder
from renature import events as e
from renature.game import replay


async def append_batches(
    store: RedisEventStore, game_id: str, events: list[e.Event], *, hashed: bool = False
) -> None:
    """Append events in their command batches (a batch starts at an event with a cause), with
    each event's chain hash beside it as the rules service stores it when ``hashed``."""
    batches: list[list[e.Event]] = []
    for event in events:
        if event.cause is not None or not batches:
            batches.append([])
        batches[-1].append(event)
    version = await store.version(game_id)
    for batch in batches:
        if batch[-1].version <= version:
            continue
        request = AppendRequest(
            game_id,
            command_id=f"c{batch[0].version}",
            expected_version=batch[0].version - 1,
            events=[e.encode(ev) for ev in batch],
            outcome=b"ok",
            hashes=[ev.hash for ev in batch] if hashed else None,
        )
        (result,) = await store.append_many([request])
        assert result.__class__.__name__ == "Appended", result
        version = batch[-1].version


async def drain(projector: Projector[Any]) -> int:
    """Set the projector up and project every entry of its feeds; returns how many."""
    await projector.setup()
    total = 0
    while read := await projector.poll():
        total += read
    return total


def expected_board(events: list[e.Event]) -> bytes:
    """The board model of a fresh replay of ``events``."""
    state = replay(events)
    assert state is not None
    return json_encoder.encode(board_model(state))
