"""A Janken through the rules service's handler (the in-memory store, no Redis): the service
seals each hand with a salt of its own, whatever a client sent, provenance leaves hand and salt
out, and the stored game audits (ruling 15)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import msgspec
import pytest

from eventstore.memory_store import MemoryEventStore
from gameserver.rules.rules_service import CommandHandler
from gameserver.runtime.bus import CommandEnvelope, Reply
from renaissance import commands as c
from renaissance import events as e
from renaissance.adapter import GAME as RENAISSANCE
from renaissance.audit import audit
from renaissance.view import visible_event

GAME_ID = "rn-janken"
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
VARIANT = c.Variant(play="phase2", distribution="take")


class NoVault:
    """Renaissance keeps no secret seed: the handler must never ask the vault."""

    async def create(self, game_id: str) -> str:
        raise AssertionError("a public seed needs no vault")

    async def get(self, game_id: str) -> str | None:
        raise AssertionError("a public seed needs no vault")


@pytest.fixture
def store() -> MemoryEventStore:
    return MemoryEventStore()


@pytest.fixture
def handler(store: MemoryEventStore) -> CommandHandler:
    return CommandHandler(store, NoVault(), clock=lambda: NOW)


async def send(handler: CommandHandler, command: c.Command, number: int, seat: int | None) -> Reply:
    envelope = CommandEnvelope(GAME_ID, f"cmd-{number}", command, seat, "renaissance")
    (raw,) = await handler.handle_batch([msgspec.json.encode(envelope)])
    return msgspec.json.decode(raw, type=Reply)


async def first_hand_shown(handler: CommandHandler, hand: c.ShowHand) -> None:
    """A game of Phase 2 only created, seated and started; then ``hand`` shown."""
    setup: list[tuple[c.Command, int | None]] = [
        (c.CreateGame(GAME_ID, "public seed", variant=VARIANT), None),
        (c.JoinGame(0, "Ada"), None),
        (c.JoinGame(1, "Bo"), None),
        (c.StartGame(), None),
        (hand, hand.seat),
    ]
    for number, (command, seat) in enumerate(setup):
        assert (await send(handler, command, number, seat)).status == "accepted"


async def test_the_service_seals_each_hand_with_its_own_salt(
    handler: CommandHandler, store: MemoryEventStore
) -> None:
    await first_hand_shown(handler, c.ShowHand(1, "rock", salt="mine"))  # a client's salt
    stored = await store.read(GAME_ID)
    shown = RENAISSANCE.decode_event(stored[-1].data)
    assert isinstance(shown, e.HandShown)
    assert re.fullmatch("[0-9a-f]{32}", shown.salt)
    meta = msgspec.json.decode(stored[-1].meta or b"")
    assert (meta["command"]["hand"], meta["command"]["salt"]) == ("", "")
    assert visible_event(shown, 0).hand == ""

    reply = await send(handler, c.ShowHand(0, "paper"), 9, 0)
    assert reply.status == "accepted"
    events = [RENAISSANCE.decode_event(s.data) for s in await store.read(GAME_ID)]
    played = next(ev for ev in events if isinstance(ev, e.JankenPlayed))
    assert played.hands == ["paper", "rock"]
    assert played.winner == 0
    assert played.salts[1] == shown.salt
    assert audit(events).ok


async def test_a_second_hand_of_one_seat_is_refused_and_changes_nothing(
    handler: CommandHandler, store: MemoryEventStore
) -> None:
    await first_hand_shown(handler, c.ShowHand(0, "rock"))
    before = await store.read(GAME_ID)
    reply = await send(handler, c.ShowHand(0, "paper"), 7, 0)
    assert (reply.status, reply.code) == ("rejected", "illegal_choice")
    assert "paper" not in (reply.message or "")
    assert await store.read(GAME_ID) == before
