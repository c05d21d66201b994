"""Commands: what a player (or the system) asks for. Imperative names, tagged by ``type``.

A seat's command names the acting ``seat`` (0 is the starting player). Cells are x/y on the board
grid, as in ``renature board show --json``. Set-up commands (``CreateGame``, ``JoinGame``,
``StartGame``, ``FinishGame``) are issued by the service; ``FinishGame`` reveals the seed once the
last domino is gone.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from gameplatform.forms import PLAYER_NAME_PATTERN
from renature.clock import TimeControl
from renature.components import Colour, PlantType, components

Coordinate = Annotated[int, msgspec.Meta(ge=0, le=255)]
"""A column or row of the board grid (no board is wider or taller than this)."""
SeatNumber = Annotated[int, msgspec.Meta(ge=0, le=3, description="0 is the starting player")]
DominoNumber = Annotated[
    int, msgspec.Meta(ge=0, le=999, description="Its index in GameCreated.dominoes")
]
# Every string a command carries is bounded, and enumerated where it can be, so a command that
# decodes is small whatever a client sent (and no message that names it can grow with it).
ANIMALS: tuple[str, ...] = components().animals
AnimalName = Annotated[
    str,
    msgspec.Meta(
        max_length=max(len(a) for a in ANIMALS),
        pattern=f"^({'|'.join(ANIMALS)})$",
        extra_json_schema={"enum": list(ANIMALS)},
        description="One of the animals of the component data",
    ),
]
GameIdText = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=r"^[^:{}\s]+$")]
"""A game id: what the store's key layout accepts (no colon, brace or white space)."""
SeedText = Annotated[str, msgspec.Meta(max_length=512)]
BoardName = Annotated[str, msgspec.Meta(min_length=1, max_length=32, pattern=r"^[a-z0-9-]+$")]
"""A board id (base, valley, valley-back); the rules refuse one they do not know."""
PlayerName = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=40,
        pattern=PLAYER_NAME_PATTERN,
        description="1 to 40 characters, no control or invisible formatting characters",
    ),
]


class Cell(msgspec.Struct, frozen=True):
    x: Coordinate
    y: Coordinate


class Command(msgspec.Struct, frozen=True, tag_field="type", forbid_unknown_fields=True):
    pass


class CreateGame(Command, frozen=True):
    """Create a game dealt from ``seed``. The service fills ``seed`` and ``salt`` from its seed
    vault (a client's are never used) and says with ``chosen_seed`` whether the seed was chosen
    by a caller (tests, bots, tournaments) rather than drawn at random."""

    game_id: GameIdText
    players: int
    seed: SeedText
    board: BoardName = "base"
    salt: str = ""
    chosen_seed: bool = False
    clock: TimeControl | msgspec.UnsetType = msgspec.UNSET
    """The time control, if any (left out of the JSON when none: older bytes stay as they were)."""


class JoinGame(Command, frozen=True):
    seat: SeatNumber
    name: PlayerName


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
    animal: AnimalName | None = None
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


class LeaveGame(Command, frozen=True):
    """A player leaves the lobby (before the start): the seat is free again."""

    seat: SeatNumber


class RemovePlayer(Command, frozen=True):
    """The host removes a player from the lobby (before the start)."""

    seat: SeatNumber


class CancelGame(Command, frozen=True):
    """The host cancels a game that has not started."""


class Resign(Command, frozen=True):
    """A player gives up a started game (docs/rules.md: what happens to a resigned seat)."""

    seat: SeatNumber


class ClaimTimeout(Command, frozen=True):
    """The clock service says ``seat`` ran out of time; the rules check it against the
    recorded times (refused before the deadline)."""

    seat: SeatNumber


class ReclaimSeat(Command, frozen=True):
    """The player of ``seat`` takes it back from the bot that plays it since its time ran out
    (refused while the seat plays for itself)."""

    seat: SeatNumber


class FinishGame(Command, frozen=True):
    """Reveal the seed (and the salt of its commitment) and carry out the final scoring
    (after the last domino)."""

    seed: SeedText
    salt: str = ""


SeatCommand = (
    PlaceDomino
    | DiscardDomino
    | PlacePlant
    | SkipPlant
    | CloudAction
    | PlaceMushroom
    | SkipMushroom
    | EndTurn
    | ReclaimSeat
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
    | LeaveGame
    | RemovePlayer
    | CancelGame
    | Resign
    | ClaimTimeout
    | ReclaimSeat
)

command_decoder = msgspec.json.Decoder(AnyCommand)
