"""Sealed choices: a simultaneous hidden choice, committed and then revealed (pure).

Some games need the seats to choose at the same time without seeing each other's choice
(Renaissance's Janken, a Goofspiel bid). A turn-based event stream cannot take two commands at
once, so each seat's choice is *sealed*: it is recorded with its commitment, the SHA-256 of
``choice:salt`` (hex), and shown to nobody else until every seat has chosen; then the rules
reveal all of them in the same batch, and anyone can check each revealed choice and salt
against the commitment that was visible before the other seats chose.

Who holds the salt: the server. A seat sends only its choice; the service puts a fresh random
salt into the command before the rules decide it (``Game.needs_seed``/``with_seed``, as it
seeds a creation), so a frontend needs no hashing and keeps no secret, and no seat can hold up
the game by refusing to reveal: nothing is revealed by a seat. The choice is kept in the
stream until the reveal; views, the state a seat reads and visible events blank it for every
other viewer (`masked`). Its commitment is shown to everyone at once, so the reveal can be
checked afterwards by the other seat, a spectator or the audit (`reveal_problem`).

A game keeps a `Sealed` value in its state (one `SealedChoice` slot a seat), and uses these
helpers from its ``decide`` (`SealedChoice.of`, `Sealed.put`, `is_complete`), ``evolve``, ``view``
(`Sealed.masked`) and audit (`reveal_problem`).
"""

from __future__ import annotations

import hashlib

import msgspec
from msgspec.structs import replace

MAX_SALT = 128
"""The longest salt a command may carry (the service draws 32 hex digits)."""


def commitment(choice: str, salt: str) -> str:
    """The commitment of ``choice`` under ``salt``: the hex SHA-256 of ``choice:salt``."""
    return hashlib.sha256(f"{choice}:{salt}".encode()).hexdigest()


def reveal_problem(committed: str, choice: str, salt: str) -> str | None:
    """Why a revealed ``choice`` and ``salt`` do not open ``committed`` (None when they do)."""
    if commitment(choice, salt) != committed:
        return (
            f"the revealed choice {choice!r} with its salt does not match the commitment "
            f"{committed} made before the other seats chose"
        )
    return None


class SealedChoice(msgspec.Struct, frozen=True):
    """One seat's slot: empty until it chooses; ``choice`` and ``salt`` are secret until every
    seat has chosen (``masked`` blanks them), ``commitment`` is public."""

    commitment: str = ""
    choice: str = ""
    salt: str = ""

    @classmethod
    def of(cls, choice: str, salt: str) -> SealedChoice:
        """``choice`` sealed under ``salt``."""
        return cls(commitment(choice, salt), choice, salt)

    @property
    def is_sealed(self) -> bool:
        return bool(self.commitment)


class Sealed(msgspec.Struct, frozen=True):
    """The sealed choices of one simultaneous decision, a slot a seat."""

    slots: tuple[SealedChoice, ...]

    @classmethod
    def open(cls, seats: int) -> Sealed:
        """A new decision: no seat has chosen yet."""
        return cls(tuple(SealedChoice() for _ in range(seats)))

    def put(self, seat: int, slot: SealedChoice) -> Sealed:
        """``seat``'s slot filled (``decide`` checks that it was empty; ``evolve`` applies the
        recorded slot as it is)."""
        return replace(self, slots=(*self.slots[:seat], slot, *self.slots[seat + 1 :]))

    def has_chosen(self, seat: int) -> bool:
        return self.slots[seat].is_sealed

    @property
    def is_complete(self) -> bool:
        """Every seat has chosen: the choices may be revealed."""
        return all(slot.is_sealed for slot in self.slots)

    def waiting_for(self) -> list[int]:
        """The seats that have not chosen yet, in seat order."""
        return [seat for seat, slot in enumerate(self.slots) if not slot.is_sealed]

    def masked(self, viewer: int | None) -> Sealed:
        """What ``viewer`` (a seat, None: a spectator) may see: every commitment, its own
        choice, and every other seat's choice only once all have chosen."""
        if self.is_complete:
            return self
        return replace(
            self,
            slots=tuple(
                slot if seat == viewer else SealedChoice(slot.commitment)
                for seat, slot in enumerate(self.slots)
            ),
        )


def salt_problem(salt: str) -> str | None:
    """Why ``salt`` cannot seal a choice (None when it can)."""
    if len(salt) > MAX_SALT:
        return f"A salt has at most {MAX_SALT} characters."
    return None
