"""UNIT tests of withdrawn joins (`gameserver.rules.withdrawals`): the rules service fences a
join the gateway found abandoned, on the in-memory store (no Redis)."""

from __future__ import annotations

import msgspec
import pytest

from eventstore.memory_store import MemoryEventStore
from gameserver.rules.rules_service import CommandHandler
from gameserver.runtime import bus
from renature import commands as c

GAME = "g-withdraw"


class Seeds:
    async def create(self, game_id: str) -> str:
        return "ab" * 32

    async def get(self, game_id: str) -> str | None:
        return "ab" * 32


@pytest.fixture
async def handler() -> CommandHandler:
    handler = CommandHandler(MemoryEventStore(), Seeds())
    await handler.handle(bus.CommandEnvelope(GAME, "create", c.CreateGame(GAME, 2, "")))
    return handler


async def answers(handler: CommandHandler, *envelopes: bus.CommandEnvelope) -> list[bus.Reply]:
    bodies = [bus.encoder.encode(envelope) for envelope in envelopes]
    return [bus.reply_decoder.decode(reply) for reply in await handler.handle_batch(bodies)]


def join(seat: int, command_id: str) -> bus.CommandEnvelope:
    return bus.CommandEnvelope(GAME, command_id, c.JoinGame(seat, f"p{seat}"))


async def test_an_abandoned_join_is_fenced_and_can_never_land(handler: CommandHandler) -> None:
    join_id = bus.join_command_id(0, "lost")
    (fenced,) = await answers(handler, bus.withdrawal(GAME, join_id, 0, "renature"))
    assert (fenced.status, fenced.code) == ("rejected", "join_abandoned")
    (late,) = await answers(handler, join(0, join_id))
    assert (late.status, late.code) == ("rejected", "join_abandoned")
    assert await handler.store.version(GAME) == 1  # nothing appended
    (again,) = await answers(handler, bus.withdrawal(GAME, join_id, 0, "renature"))
    assert again.code == "join_abandoned"


async def test_a_join_that_landed_is_answered_with_its_acceptance(
    handler: CommandHandler,
) -> None:
    """In one batch, behind its join: the join is decided first and lands."""
    join_id = bus.join_command_id(1, "queued")
    landed, withdrawn = await answers(
        handler, join(1, join_id), bus.withdrawal(GAME, join_id, 1, "renature")
    )
    assert landed.status == "accepted"
    assert withdrawn == landed


async def test_a_seat_taken_by_another_command_is_not_fenced(handler: CommandHandler) -> None:
    await answers(handler, join(0, bus.join_command_id(0, "first")))
    other = bus.join_command_id(0, "second")
    (refused,) = await answers(handler, bus.withdrawal(GAME, other, 0, "renature"))
    assert (refused.status, refused.code) == ("rejected", "seat_taken")
    assert await handler.store.get_outcome(GAME, other) is None


async def test_a_join_refused_before_is_answered_as_abandoned(handler: CommandHandler) -> None:
    join_id = bus.join_command_id(5, "bad-seat")
    (refused,) = await answers(handler, join(5, join_id))
    assert refused.status == "rejected"
    (withdrawn,) = await answers(handler, bus.withdrawal(GAME, join_id, 0, "renature"))
    assert withdrawn.code == "not_a_join"  # the id names seat 5, not seat 0


@pytest.mark.parametrize(
    ("command_id", "seat", "sender", "code"),
    [
        ("seat0:m1", None, bus.GATEWAY, "not_a_join"),  # a seat's move
        ("create", None, bus.GATEWAY, "not_a_join"),
        ("join:1:x", None, bus.GATEWAY, "not_a_join"),  # another seat's join
        ("join:0:", None, bus.GATEWAY, "not_a_join"),
        ("join:0:x", 0, bus.GATEWAY, "invalid_command"),  # sent as a seat
        ("join:0:x", None, bus.CLOCK, "wrong_sender"),
    ],
)
async def test_what_is_no_withdrawal_of_a_join_is_refused_unrecorded(
    handler: CommandHandler, command_id: str, seat: int | None, sender: str, code: str
) -> None:
    envelope = bus.CommandEnvelope(GAME, command_id, bus.WithdrawJoin(0), seat, "renature")
    before = await handler.store.get_outcome(GAME, command_id)
    (raw,) = await handler.handle_batch([bus.encoder.encode(envelope)], sender)
    reply = bus.reply_decoder.decode(raw)
    assert (reply.status, reply.code) == ("rejected", code)
    assert await handler.store.get_outcome(GAME, command_id) == before  # the creation's kept


async def test_a_withdrawal_of_no_game_or_no_seat_is_refused(handler: CommandHandler) -> None:
    nowhere = bus.withdrawal("g-none", bus.join_command_id(0, "x"), 0, "renature")
    far = bus.withdrawal(GAME, bus.join_command_id(7, "x"), 7, "renature")
    (missing, no_seat) = await answers(handler, nowhere, far)
    assert missing.code == "game_not_found"
    assert no_seat.code == "invalid_seat"


def test_a_withdrawal_crosses_the_bus_and_a_bad_command_keeps_its_error() -> None:
    envelope = bus.withdrawal(GAME, bus.join_command_id(0, "x"), 0, "renature")
    assert bus.decode_envelope(bus.encoder.encode(envelope)) == envelope
    with pytest.raises(msgspec.ValidationError, match="Nope"):
        bus.decode_envelope(b'{"game_id":"g","command_id":"x","command":{"type":"Nope"}}')
