"""The rules service's reply as a use case's result: the versions its events took, or the
refusal it is (`refusals.rejection_kind` gives its kind)."""

from __future__ import annotations

from dataclasses import dataclass

from gameserver.gateway.use_cases.refusals import Refusal, rejection_kind
from gameserver.runtime.bus import Reply


@dataclass(frozen=True, slots=True)
class Outcome:
    """An accepted command: the game's version after it and the versions of its events."""

    game_id: str
    command_id: str
    """The command id as the caller knows it (without a seat's namespace)."""
    version: int
    first_version: int
    last_version: int


def outcome_of(reply: Reply, command_id: str) -> Outcome:
    """The accepted reply as an `Outcome`, or the rejection as a `Refusal`."""
    if reply.status == "accepted":
        return Outcome(
            game_id=reply.game_id,
            command_id=command_id,
            version=reply.version,
            first_version=reply.first_version,
            last_version=reply.last_version,
        )
    code = reply.code or "rule_broken"
    raise Refusal(rejection_kind(code), code, reply.message or "The command was refused.")
