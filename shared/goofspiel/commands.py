"""Commands: what a player (or the service) asks for. Imperative names, tagged by ``type``.

Cards are numbers: 1 is the ace, 11 to 13 the jack, queen and king. A seat's command names the
acting ``seat`` (0 or 1).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from gameplatform.clock import TimeControl

MAX_CARDS = 13
SeatNumber = Annotated[int, msgspec.Meta(ge=0, le=1)]
Card = Annotated[int, msgspec.Meta(ge=1, le=MAX_CARDS, description="1 (ace) to 13 (king)")]
CardCount = Annotated[
    int, msgspec.Meta(ge=1, le=MAX_CARDS, description="cards of each suit, 13 for the full game")
]
Ties = Literal["discard", "carry"]


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A game's options as a creation takes them (unknown fields are refused).

    ``cards``: each suit runs from the ace to this card (13: the whole suit; fewer: a short
    game of as many turns). ``ties``: a tied bid ``discard``s the prize (the classic rule) or
    ``carry``s it over to the next turn's prize."""

    cards: CardCount = MAX_CARDS
    ties: Ties = "discard"
    time_control: TimeControl | None = None
    """A turn clock (rulings 10 and 11): ``per_turn`` seconds for each bid, or a ``total`` per
    seat plus an ``increment`` per bid; ``on_timeout`` ``bot`` or ``remove``."""

    def problem(self) -> str | None:
        """Why these options cannot be used together, or None."""
        return None if self.time_control is None else self.time_control.problem()


class Command(msgspec.Struct, frozen=True, tag_field="type", forbid_unknown_fields=True):
    pass


class CreateGame(Command, frozen=True):
    """Create a game whose prize deck is shuffled from ``seed``. The service fills ``seed`` and
    ``salt`` from its vault and says with ``chosen_seed`` whether a caller chose the seed."""

    game_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    seed: str
    players: int = 2
    cards: CardCount = MAX_CARDS
    ties: Ties = "discard"
    salt: str = ""
    chosen_seed: bool = False
    clock: TimeControl | msgspec.UnsetType = msgspec.UNSET
    """The turn clock, where the game has one (left out otherwise)."""


class JoinGame(Command, frozen=True):
    seat: SeatNumber
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=40)]


class StartGame(Command, frozen=True):
    pass


class Bid(Command, frozen=True):
    """Lay one card of your hand face down for the upturned prize."""

    seat: SeatNumber
    card: Card


class Resign(Command, frozen=True):
    """Concede the game: the other seat wins, whatever the scores (rulings, 8)."""

    seat: SeatNumber


class LeaveGame(Command, frozen=True):
    """A seated player leaves the lobby before the start (rulings, 9)."""

    seat: SeatNumber


class RemovePlayer(Command, frozen=True):
    """The host frees a lobby seat before the start (rulings, 9)."""

    seat: SeatNumber


class CancelGame(Command, frozen=True):
    """The host calls the game off before its start; nothing follows (rulings, 9)."""


class ClaimTimeout(Command, frozen=True):
    """The clock service's: ``seat``'s time has run out (rulings, 10 and 11)."""

    seat: SeatNumber


class ReclaimSeat(Command, frozen=True):
    """The player of a seat a bot plays since its timeout takes it back (rulings, 12)."""

    seat: SeatNumber


class FinishGame(Command, frozen=True):
    """The service's, once the last prize is settled: reveal the seed (and the salt of its
    commitment) so that anyone can check the prize deck."""

    seed: str
    salt: str = ""


SeatCommand = Bid | Resign | ReclaimSeat
AnyCommand = (
    CreateGame
    | JoinGame
    | StartGame
    | Bid
    | Resign
    | FinishGame
    | LeaveGame
    | RemovePlayer
    | CancelGame
    | ClaimTimeout
    | ReclaimSeat
)
