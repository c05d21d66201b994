"""Events: what happened, past tense, frozen and tagged by ``type``.

Every event carries the game id, its version (1-based position in the game's stream) and the
acting seat (``None`` for the system). Each carries what a reader needs to check it without the
code: cells as x/y (as in the board JSON), animals, plant colour and type, points and their reason.
New fields must always get defaults, so old streams keep decoding.
"""

from __future__ import annotations

import msgspec
from msgspec.structs import replace

from gameplatform import chain
from gameplatform.chain import canonical_bytes as canonical_bytes  # re-exported: the platform's
from gameplatform.chain import chain_hash as chain_hash
from gameplatform.chain import encode as encode
from gameplatform.chain import seal as seal
from renature.clock import TimeControl
from renature.commands import AnyCommand, CreateGame, FinishGame


class Cause(msgspec.Struct, frozen=True):
    """Provenance of a batch: the command that caused it (on the batch's first event), the
    client's command id and the service's time. A creation's seed is never recorded here: the
    creation event holds its commitment, and the end of the game reveals it."""

    command: AnyCommand
    command_id: str | None = None
    time: str | None = None


class Event(chain.Event, frozen=True, kw_only=True):
    """Base of all events: the platform's (game id, version, seat, cause, and the hash chain
    ``prev_hash``/``hash``, see `gameplatform.chain`), its cause one of Renature's commands."""

    cause: Cause | None = None


class Half(msgspec.Struct, frozen=True):
    """One half of a placed domino: the animal on cell (x, y)."""

    x: int
    y: int
    animal: str


class Deal(msgspec.Struct, frozen=True):
    """The whole deal, recorded so that a replay never shuffles again.

    ``hands[s]`` is seat s's starting hand, ``reserves[s]`` its face-down reserve in draw order.
    """

    hands: list[list[int]]
    reserves: list[list[int]]
    box: list[int]
    area_tokens: dict[str, str]
    spare_tokens: list[str]


class GameCreated(Event, frozen=True):
    board: str
    players: int
    seat_colours: list[str]
    seed_commitment: str
    deal: Deal | None
    dominoes: list[tuple[str, str]]
    clock: TimeControl | msgspec.UnsetType = msgspec.UNSET
    """The time control chosen at creation (absent from the JSON when there is none)."""
    chosen_seed: bool = False
    """The deal comes from a seed a caller chose (tests, bots, tournaments), not a secret
    random one: whoever chose it knows every hand."""


class PlayerJoined(Event, frozen=True):
    name: str


class GameStarted(Event, frozen=True):
    first_seat: int
    starting_scores: list[int]


class DominoPlaced(Event, frozen=True):
    domino: int
    first: Half
    second: Half
    joker: str
    clouds_taken: int = 0
    clouds_returned: int = 0
    stumps_covered: int = 0


class DominoDiscarded(Event, frozen=True):
    domino: int | None


class PlantPlaced(Event, frozen=True):
    x: int
    y: int
    area: str
    colour: str
    plant: str
    value: int
    points: int
    reason: str
    clouds_taken: int = 0
    clouds_returned: int = 0


class PlantSkipped(Event, frozen=True):
    pass


class Award(msgspec.Struct, frozen=True):
    seat: int
    colour: str
    points: int
    reason: str


class AreaScored(Event, frozen=True):
    """An area scoring (ruling 7; Valley: by size at the end). ``seat`` closed it, if anyone."""

    area: str
    size: int
    token: str | None
    main: int
    minor: int
    totals: dict[str, int]
    cancelled: list[str]
    awards: list[Award]
    final: bool = False


class DominoDrawn(Event, frozen=True):
    domino: int | None


class JokerChanged(Event, frozen=True):
    from_animal: str
    to_animal: str
    cost: int


class PlantReturned(Event, frozen=True):
    x: int
    y: int
    area: str
    colour: str
    plant: str
    cost: int


class ExtraTurnTaken(Event, frozen=True):
    cost: int


class MushroomGained(Event, frozen=True):
    mushrooms_left: int


class MushroomPlaced(Event, frozen=True):
    x: int
    y: int
    area: str
    joined: list[str]
    size: int


class MushroomDeclined(Event, frozen=True):
    """The player chose not to take the mushroom: it goes back to the supply."""

    mushrooms_left: int


class MushroomLost(Event, frozen=True):
    reason: str


class TurnEnded(Event, frozen=True):
    next_seat: int | None
    skipped: list[int] = []


class CloudsScored(Event, frozen=True):
    clouds: int
    points: int


class PlantsPenalised(Event, frozen=True):
    plants: list[str]
    points: int


class TokensRevealed(Event, frozen=True):
    tokens: list[str]
    backs: list[int]
    points: int


class GameEnded(Event, frozen=True):
    """The end: the seed and the salt of its commitment are revealed here, and only here."""

    seed: str
    scores: list[int]
    tiebreak: list[list[int]]
    ranking: list[int]
    winners: list[int]
    salt: str = ""


class PlayerLeft(Event, frozen=True):
    """A player left the lobby (``left``) or the host removed them (``removed``)."""

    reason: str


class GameCancelled(Event, frozen=True):
    """The host cancelled the game before its start."""


class SeatTimedOut(Event, frozen=True):
    """``seat``'s time ran out at ``deadline``; ``on_timeout`` says what follows: ``bot`` (a
    bot plays on for it) or ``remove`` (a ``SeatResigned`` follows)."""

    deadline: str
    on_timeout: str


class SeatReclaimed(Event, frozen=True):
    """``seat``'s player took the seat back from the bot that played it since its time ran
    out: it plays for itself again."""


class SeatResigned(Event, frozen=True):
    """``seat`` is out of the game (``reason``: ``resigned``, or ``timeout``): its
    ``dominoes_returned`` dominoes (hand and reserve) go back to the box unseen."""

    reason: str
    dominoes_returned: int


AnyEvent = (
    GameCreated
    | PlayerJoined
    | GameStarted
    | DominoPlaced
    | DominoDiscarded
    | PlantPlaced
    | PlantSkipped
    | AreaScored
    | DominoDrawn
    | JokerChanged
    | PlantReturned
    | ExtraTurnTaken
    | MushroomGained
    | MushroomPlaced
    | MushroomDeclined
    | MushroomLost
    | TurnEnded
    | CloudsScored
    | PlantsPenalised
    | TokensRevealed
    | GameEnded
    | PlayerLeft
    | GameCancelled
    | SeatTimedOut
    | SeatResigned
    | SeatReclaimed
)

event_decoder = msgspec.json.Decoder(AnyEvent)
events_decoder = msgspec.json.Decoder(list[AnyEvent])


def decode(data: bytes | str) -> Event:
    event: Event = event_decoder.decode(data)
    return event


def public_command(command: AnyCommand) -> AnyCommand:
    """The command as recorded in provenance: seeds and salts are left out. A creation's must
    stay secret until the end; a finish's are revealed by design in ``GameEnded`` (the last
    event of the batch), not by the cause on its first event, which every viewer may see."""
    if isinstance(command, CreateGame | FinishGame):
        return replace(command, seed="", salt="")
    return command


def points_awarded(event: Event) -> list[tuple[int, int, str]]:
    """Every (seat, points, reason) an event awards: the scores are the sum of these."""
    match event:
        case GameStarted(starting_scores=scores):
            return [(seat, p, "starting score") for seat, p in enumerate(scores)]
        case PlantPlaced(seat=int(seat), points=points, reason=reason):
            return [(seat, points, reason)]
        case AreaScored(awards=awards):
            return [(a.seat, a.points, a.reason) for a in awards]
        case CloudsScored(seat=int(seat), points=points, clouds=clouds):
            return [(seat, points, f"{clouds} clouds left, 1 point each")]
        case PlantsPenalised(seat=int(seat), points=points, plants=plants):
            return [(seat, points, f"plants left on the player board: {', '.join(plants)}")]
        case TokensRevealed(seat=int(seat), points=points, backs=backs):
            return [(seat, points, f"backs of {len(backs)} area tokens")]
    return []
