"""Commands: what a player (or the system) asks for. Imperative names, tagged by ``type``.

A seat's command names the acting ``seat`` (0 is the starting player). Cells are x/y on the board
grid, as in ``renature board show --json``. Set-up commands (``CreateGame``, ``JoinGame``,
``StartGame``, ``FinishGame``) are issued by the service; ``FinishGame`` reveals the seed once the
last domino is gone.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from renature.components import Colour, PlantType

Coordinate = Annotated[int, msgspec.Meta(ge=0, le=255)]
"""A column or row of the board grid (no board is wider or taller than this)."""
SeatNumber = Annotated[int, msgspec.Meta(ge=0, le=3, description="0 is the starting player")]
DominoNumber = Annotated[
    int, msgspec.Meta(ge=0, le=999, description="Its index in GameCreated.dominoes")
]


class Cell(msgspec.Struct, frozen=True):
    x: Coordinate
    y: Coordinate


class Command(msgspec.Struct, frozen=True, tag_field="type", forbid_unknown_fields=True):
    pass


class CreateGame(Command, frozen=True):
    game_id: str
    players: int
    seed: str
    board: str = "base"


class JoinGame(Command, frozen=True):
    seat: SeatNumber
    name: str


class StartGame(Command, frozen=True):
    pass


class PlaceDomino(Command, frozen=True):
    """Put ``domino`` from the hand on the board: its first animal on ``first``, its second on
    ``second`` (the animals as listed for that domino, e.g. in the seat's view)."""

    seat: SeatNumber
    domino: DominoNumber
    first: Cell
    second: Cell


class DiscardDomino(Command, frozen=True):
    seat: SeatNumber
    domino: DominoNumber


class PlacePlant(Command, frozen=True):
    seat: SeatNumber
    cell: Cell
    colour: Colour
    plant: PlantType


class SkipPlant(Command, frozen=True):
    seat: SeatNumber


CloudActionKind = Literal["change_joker", "extra_turn", "return_plant"]


class CloudAction(Command, frozen=True):
    """Spend clouds: ``change_joker`` (2, needs ``animal``), ``extra_turn`` (3, at the end of
    the turn), ``return_plant`` (the plant's value, needs ``cell``)."""

    seat: SeatNumber
    kind: CloudActionKind
    animal: str | None = None
    cell: Cell | None = None


class PlaceMushroom(Command, frozen=True):
    """Valley: put the mushroom just gained on a free meadow space beside an area space."""

    seat: SeatNumber
    cell: Cell


class SkipMushroom(Command, frozen=True):
    """Valley: do not take the mushroom ("you may immediately take a mushroom"); it stays in
    the supply."""

    seat: SeatNumber


class EndTurn(Command, frozen=True):
    seat: SeatNumber


class FinishGame(Command, frozen=True):
    """Reveal the seed and carry out the final scoring (after the last domino)."""

    seed: str


SeatCommand = (
    PlaceDomino
    | DiscardDomino
    | PlacePlant
    | SkipPlant
    | CloudAction
    | PlaceMushroom
    | SkipMushroom
    | EndTurn
)
AnyCommand = (
    CreateGame
    | JoinGame
    | StartGame
    | PlaceDomino
    | DiscardDomino
    | PlacePlant
    | SkipPlant
    | CloudAction
    | PlaceMushroom
    | SkipMushroom
    | EndTurn
    | FinishGame
)

command_decoder = msgspec.json.Decoder(AnyCommand)
