"""Commands: what a player (or the service) asks for. Imperative names, tagged by ``type``.

A seat's command names the acting ``seat``: seat 0 plays Silver in the first set (Silver places
the first polyomino), seat 1 Gold; the colours change sides every set (ruling 10). Squares are
x/y with (0, 0) the top-left corner and (3, 3) the blocked centre. A piece is named by its id
(``domino-1``, ``tri-V-2``, ``tetra-T`` ..., see ``renaissance schema`` / the view); a placement
lists the squares it covers in reading order (by y, then x).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from gameplatform.clock import TimeControl
from renaissance.components import Colour, Direction

Coordinate = Annotated[int, msgspec.Meta(ge=0, le=255)]
SeatNumber = Annotated[int, msgspec.Meta(ge=0, le=1, description="0 plays Silver in set 1")]


class Square(msgspec.Struct, frozen=True):
    x: Coordinate
    y: Coordinate


class Command(msgspec.Struct, frozen=True, tag_field="type", forbid_unknown_fields=True):
    pass


Play = Literal["both", "phase1", "phase2"]
ExtraHand = Literal["rectangle", "ring"]
Distribution = Literal["take", "give"]
JankenHand = Literal["rock", "paper", "scissors"]


class Variant(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What the players agree on before the game ("VARIANTS", rulings 13 to 16): ``play`` both
    phases, only Phase 1 (with ``extra_hands``) or only Phase 2 (its pieces distributed after a
    Janken: ``take`` one each in turn, or ``give`` one each to the other); and whether Phase 2
    may also end by ``phase2_agreement``."""

    play: Play = "both"
    extra_hands: list[ExtraHand] = []
    distribution: Distribution | None = None
    phase2_agreement: bool = False


class CreateGame(Command, frozen=True):
    """``sets`` games are played; the competition rule (``points`` or ``sets``) decides the
    winner over them ("Competition Rule"). The seed names the game and seeds its bots.
    ``variant`` is left out of a game of the standard rules (so their records stay as they
    were)."""

    game_id: str
    seed: str
    players: int = 2
    sets: Annotated[int, msgspec.Meta(ge=1, le=16)] = 1
    competition: Literal["points", "sets"] = "points"
    clock: TimeControl | msgspec.UnsetType = msgspec.UNSET
    """A turn clock (the platform's time controls; ruling 18); none by default."""
    variant: Variant | msgspec.UnsetType = msgspec.UNSET


class JoinGame(Command, frozen=True):
    seat: SeatNumber
    name: str


class StartGame(Command, frozen=True):
    pass


class PlacePiece(Command, frozen=True):
    """Set-up: put a piece of the common supply on the board; Phase 2: put one of your own."""

    seat: SeatNumber
    piece: str
    squares: list[Square]


class LiftPiece(Command, frozen=True):
    """Set-up relocation: take a polyomino back off the board (ruling 4)."""

    seat: SeatNumber
    piece: str


class PlaceMarker(Command, frozen=True):
    """Phase 1: put a marker on a free square; Phase 2 preparation: put one of your 3."""

    seat: SeatNumber
    square: Square


class PushMarker(Command, frozen=True):
    """Phase 1 push-in: put a marker on an occupied outer square; the markers in a row from it
    move one square towards ``direction`` (into the board; at a corner either way)."""

    seat: SeatNumber
    square: Square
    direction: Direction


class ProposeEnd(Command, frozen=True):
    """Phase 1: offer to end the phase now; the pieces left go out of the game (ruling 6)."""

    seat: SeatNumber


class ProposeAward(Command, frozen=True):
    """Phase 1: offer that ``piece`` goes to ``to`` now, "distributed as agreed" (ruling 6)."""

    seat: SeatNumber
    piece: str
    to: Colour


class AcceptProposal(Command, frozen=True):
    seat: SeatNumber


class DeclineProposal(Command, frozen=True):
    seat: SeatNumber


class PlaceMonomino(Command, frozen=True):
    """Phase 2 preparation: put your monomino on the board."""

    seat: SeatNumber
    square: Square


class MoveMarker(Command, frozen=True):
    """Phase 2: move any marker (either colour) one square up, down, left or right."""

    seat: SeatNumber
    origin: Square
    target: Square


class Resign(Command, frozen=True):
    """Give up the game in play: the other seat wins it (ruling 17)."""

    seat: SeatNumber


class LeaveGame(Command, frozen=True):
    """Leave the lobby before the start; the seat is open again (ruling 17)."""

    seat: SeatNumber


class RemovePlayer(Command, frozen=True):
    """The host's: open a taken seat of the lobby (ruling 17)."""

    seat: SeatNumber


class ClaimTimeout(Command, frozen=True):
    """The clock service's: ``seat``'s time ran out (refused before its deadline; ruling 18)."""

    seat: SeatNumber


class CancelGame(Command, frozen=True):
    """The host's: call the game off before the start (ruling 17)."""


class ShowHand(Command, frozen=True):
    """Janken (Play only Phase 2): your hand, sealed until both seats have shown (ruling 15).
    Send it without ``salt``: the service seals it with a random salt of its own."""

    seat: SeatNumber
    hand: JankenHand | Literal[""]
    """Blank only where provenance leaves it out (the events reveal it)."""
    salt: Annotated[str, msgspec.Meta(max_length=128)] = ""


class ChoosePiece(Command, frozen=True):
    """Play only Phase 2: the piece you take for yourself (``take``) or choose for the other
    player (``give``), as the game was created (ruling 14)."""

    seat: SeatNumber
    piece: str


SeatCommand = (
    PlacePiece
    | LiftPiece
    | PlaceMarker
    | PushMarker
    | ProposeEnd
    | ProposeAward
    | AcceptProposal
    | DeclineProposal
    | PlaceMonomino
    | MoveMarker
    | ShowHand
    | ChoosePiece
)
AnyCommand = (
    CreateGame
    | JoinGame
    | StartGame
    | PlacePiece
    | LiftPiece
    | PlaceMarker
    | PushMarker
    | ProposeEnd
    | ProposeAward
    | AcceptProposal
    | DeclineProposal
    | PlaceMonomino
    | MoveMarker
    | LeaveGame
    | RemovePlayer
    | CancelGame
    | Resign
    | ClaimTimeout
    | ShowHand
    | ChoosePiece
)

command_decoder = msgspec.json.Decoder(AnyCommand)
