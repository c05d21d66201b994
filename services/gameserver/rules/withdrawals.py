"""Withdrawn joins: the rules service fences a join whose claim the gateway found abandoned.

A gateway claims a seat, then sends the seat's join under a command id kept with the claim
(`bus.join_command_id`). When that join never lands (the gateway died, the command was lost),
a later claimant's gateway sends a `bus.WithdrawJoin` for the old join's command id. Only the
rules service writes outcomes (the gateway's Redis user cannot), so it is the one that fences:

- it takes the withdrawal only from the gateway, with no seat, for a join's command id of the
  seat it names (`check_withdrawal`): never a seat's move, a creation or a timeout claim;
- it records the join's refusal ``join_abandoned`` as that command id's outcome unless one is
  stored already (`record_outcome`: first writer wins), so the old join, arriving later, is
  answered with the refusal and appends nothing;
- it answers ``join_abandoned`` when the join can never land (fenced now, or refused before),
  and the join's own outcome when it landed first (accepted: the seat stays taken and the
  gateway keeps the claim);
- a seat the game shows taken with no outcome for the command id is refused ``seat_taken``
  and nothing is recorded.

The withdrawal travels on the same command stream as the join (one stream per game), behind
it: a join still queued when its claim lapsed is decided before its withdrawal, and lands.
"""

from __future__ import annotations

from typing import Protocol

from eventstore import EventStore
from gameserver.runtime import bus
from gameserver.runtime.logging import bind_command, get_logger
from gameserver.runtime.state_cache import GameLoader


class CommandHandler(Protocol):
    """What a withdrawal needs of the rules service's handler: its games and its store."""

    @property
    def games(self) -> GameLoader: ...

    @property
    def store(self) -> EventStore: ...


log = get_logger("renature.rules")

ABANDONED = "join_abandoned"


def is_withdrawal(envelope: bus.CommandEnvelope) -> bool:
    return isinstance(envelope.command, bus.WithdrawJoin)


def _withdrawn_seat(envelope: bus.CommandEnvelope) -> int:
    """The seat of a withdrawal's join (the envelope is one: `is_withdrawal`)."""
    command = envelope.command
    assert isinstance(command, bus.WithdrawJoin), "only a withdrawal names a withdrawn seat"
    return command.seat


def _refusal(envelope: bus.CommandEnvelope, code: str, message: str) -> bus.Reply:
    return bus.Reply(
        status="rejected",
        game_id=envelope.game_id,
        command_id=envelope.command_id,
        code=code,
        message=message,
    )


def check_withdrawal(envelope: bus.CommandEnvelope) -> bus.Reply | None:
    """The refusal of a withdrawal that is not one (None when it may be decided)."""
    seat = _withdrawn_seat(envelope)
    if envelope.seat is not None:
        return _refusal(envelope, "invalid_command", "A withdrawal is sent with no seat.")
    if not bus.is_join_of(envelope.command_id, seat):
        return _refusal(envelope, "not_a_join", f"Only a join of seat {seat} can be withdrawn.")
    return None


async def withdraw(handler: CommandHandler, envelope: bus.CommandEnvelope) -> bytes:
    """The encoded answer to a checked withdrawal (see the module docstring): the join's
    accepted outcome when it landed, else ``join_abandoned`` once the join can never land."""
    game_id, command_id = envelope.game_id, envelope.command_id
    entry = await handler.games.load_entry(game_id)
    seat = _withdrawn_seat(envelope)
    if entry is None:
        refused = _refusal(envelope, "game_not_found", f"There is no game {game_id!r}.")
        return bus.encoder.encode(refused)
    names = entry.adapter.table(entry.value).names
    if not 0 <= seat < len(names):
        return bus.encoder.encode(_refusal(envelope, "invalid_seat", f"No seat {seat} here."))
    fence = bus.encoder.encode(
        _refusal(
            envelope,
            ABANDONED,
            "This join was not completed in time and the seat was released; join again.",
        )
    )
    if names[seat] is not None:
        stored = await handler.store.get_outcome(game_id, command_id)
        if stored is None:  # taken by another command: nothing to fence
            return bus.encoder.encode(_refusal(envelope, "seat_taken", f"Seat {seat} is taken."))
    else:
        previous = await handler.store.record_outcome(game_id, command_id, fence)
        stored = None if previous is None else previous.outcome
    with bind_command(game_id, command_id, None):
        if stored is None:
            log.info("join_withdrawn", seat=seat)
            return fence
        landed = bus.reply_decoder.decode(stored).status == "accepted"
        log.info("join_withdrawal_found_outcome", seat=seat, accepted=landed)
    return stored if landed else fence  # a refused join can never land either
