"""Events: what happened, past tense, frozen and tagged by ``type``.

Every event carries the platform's fields (`gameplatform.chain.Event`): the game id, its version
(1-based position in the stream), the acting seat (``None`` for the rules themselves), the cause
and the hash chain (``prev_hash``/``hash``, sealed by the platform). Squares are x/y. New fields
must get defaults, so old streams keep decoding.
"""

from __future__ import annotations

import msgspec

from gameplatform import chain
from gameplatform.chain import canonical_bytes as canonical_bytes  # re-exported: the platform's
from gameplatform.chain import chain_hash as chain_hash
from gameplatform.chain import encode as encode
from gameplatform.chain import seal as seal
from gameplatform.clock import TimeControl
from renaissance.commands import AnyCommand, Variant


class Cause(msgspec.Struct, frozen=True):
    """The command that caused a batch (on its first event), the client's id and the time."""

    command: AnyCommand
    command_id: str | None = None
    time: str | None = None


class Event(chain.Event, frozen=True, kw_only=True):
    """The platform's event (see `gameplatform.chain`), its cause one of Renaissance's commands."""

    cause: Cause | None = None


class At(msgspec.Struct, frozen=True):
    x: int
    y: int


class Step(msgspec.Struct, frozen=True):
    """A marker moved from one square to the next."""

    origin: At
    target: At


class PieceInfo(msgspec.Struct, frozen=True):
    id: str
    shape: list[At]
    tags: list[str]


class GameCreated(Event, frozen=True):
    seed: str
    players: int
    sets: int
    competition: str
    pieces: list[PieceInfo]
    """The pieces as the data file gives them, so a reader can check the stream alone."""
    clock: TimeControl | msgspec.UnsetType = msgspec.UNSET
    """The turn clock, where the game has one (left out otherwise)."""
    variant: Variant | msgspec.UnsetType = msgspec.UNSET
    """The variant agreed at creation; absent for the standard rules."""


class PlayerJoined(Event, frozen=True):
    name: str


class SetStarted(Event, frozen=True):
    """A new set: an empty board, Silver places the first polyomino."""

    set_number: int
    silver_seat: int
    gold_seat: int


class PiecePlaced(Event, frozen=True):
    """A polyomino laid on the board: in the set-up (from the common supply) or in Phase 2
    (from the player's own pieces)."""

    piece: str
    squares: list[At]
    colour: str
    stage: str  # "setup" or "phase2"


class RelocationRequired(Event, frozen=True):
    """Set-up: the seat to move cannot fit any piece left (ruling 4): it must lift pieces."""

    pieces_left: list[str]


class PieceLifted(Event, frozen=True):
    """Set-up relocation: a polyomino taken back off the board. ``still_blocked``: the pieces
    left (this one included) still do not all fit, so another must be lifted."""

    piece: str
    squares: list[At]
    still_blocked: bool


class SetupCompleted(Event, frozen=True):
    """Every polyomino is on the board; monominoes fill the free squares; Phase 1 begins."""

    monominoes: list[At]
    first_seat: int


class MarkerPlaced(Event, frozen=True):
    x: int
    y: int
    colour: str
    stage: str  # "phase1" or "phase2_preparation"


class MonominoPlaced(Event, frozen=True):
    """Phase 2 preparation: a player's monomino put on the board."""

    x: int
    y: int
    colour: str


class MarkersPushed(Event, frozen=True):
    """Phase 1 push-in: a marker put on the occupied outer square (x, y); the markers in a row
    from there moved one square towards ``direction``."""

    x: int
    y: int
    colour: str
    direction: str
    moved: list[Step]


class PieceAcquired(Event, frozen=True):
    """A polyomino goes to ``colour`` (``by`` majority or agreement); the markers on it go back
    to their players and monominoes fill its squares."""

    piece: str
    colour: str
    by: str
    silver: int
    gold: int
    squares: list[At]


class ProposalMade(Event, frozen=True):
    kind: str  # "end" or "award"
    piece: str | None = None
    to: str | None = None


class ProposalAccepted(Event, frozen=True):
    pass


class ProposalDeclined(Event, frozen=True):
    pass


class TurnEnded(Event, frozen=True):
    """The next seat to act; ``skipped`` seats could do nothing and lose their turn."""

    next_seat: int
    skipped: list[int] = []


class Phase1Ended(Event, frozen=True):
    """``reason``: all pieces taken, agreement, or no marker can be placed by either player.
    ``removed``: the pieces left on the board, out of this set."""

    reason: str
    removed: list[str]


class PointsScored(Event, frozen=True):
    """Points for ``seat`` (negative in Phase 2: penalties). ``rule`` names the rule."""

    colour: str
    points: int
    rule: str
    detail: str
    phase: int


class PreparationCompleted(Event, frozen=True):
    """Phase 2: every monomino and marker is on the board; the placing turns begin."""

    first_seat: int


class MarkerMoved(Event, frozen=True):
    origin: At
    target: At
    colour: str


class MarkerMoveSkipped(Event, frozen=True):
    """No marker on the board can move: the second action of the turn is skipped."""


class Phase2Ended(Event, frozen=True):
    unplaced: dict[str, list[str]]
    by: str | msgspec.UnsetType = msgspec.UNSET
    """``agreement`` when the players agreed to end it (ruling 16); absent otherwise."""


class JankenStarted(Event, frozen=True):
    """Play only Phase 2: a Janken decides who picks the next pieces (ruling 14)."""

    round: int
    pieces_left: list[str]


class HandShown(Event, frozen=True):
    """A seat's Janken hand, sealed: ``commitment`` is public, ``hand`` and ``salt`` are shown
    to that seat alone until both have shown (``visible_event`` blanks them; ruling 15)."""

    commitment: str
    hand: str
    salt: str


class JankenPlayed(Event, frozen=True):
    """Both hands revealed (by seat) with their salts; ``winner`` is None for a draw."""

    hands: list[str]
    salts: list[str]
    winner: int | None


class PieceDistributed(Event, frozen=True):
    """Play only Phase 2: ``piece`` goes into ``colour``'s hand, taken or given (``by``)."""

    piece: str
    colour: str
    by: str


class DistributionCompleted(Event, frozen=True):
    """Every piece is distributed: the Phase 2 preparation begins, Gold first."""

    hands: dict[str, list[str]]
    first_seat: int


class SetEnded(Event, frozen=True):
    set_number: int
    scores: list[int]
    """This set's score of each seat: Phase 1 points minus Phase 2 points."""
    winners: list[int]


class GameEnded(Event, frozen=True):
    scores: list[int]
    sets_won: list[int]
    competition: str
    ranking: list[int]
    winners: list[int]


class PlayerLeft(Event, frozen=True):
    """A player left the lobby (``left``) or the host removed them (``removed``)."""

    reason: str


class GameCancelled(Event, frozen=True):
    """The host cancelled the game before its start (nothing follows)."""


class SeatTimedOut(Event, frozen=True):
    """``seat``'s time ran out at ``deadline``; it loses (``on_timeout``: ``remove``): a
    ``SeatResigned`` (``timeout``) and the ``GameEnded`` follow."""

    deadline: str
    on_timeout: str


class SeatResigned(Event, frozen=True):
    """``seat`` gave up (``reason``: ``resigned``); a ``GameEnded`` with the other seat as the
    winner follows."""

    reason: str


AnyEvent = (
    GameCreated
    | PlayerJoined
    | SetStarted
    | PiecePlaced
    | RelocationRequired
    | PieceLifted
    | SetupCompleted
    | MarkerPlaced
    | MonominoPlaced
    | MarkersPushed
    | PieceAcquired
    | ProposalMade
    | ProposalAccepted
    | ProposalDeclined
    | TurnEnded
    | Phase1Ended
    | PointsScored
    | PreparationCompleted
    | MarkerMoved
    | MarkerMoveSkipped
    | Phase2Ended
    | SetEnded
    | GameEnded
    | PlayerLeft
    | GameCancelled
    | SeatResigned
    | SeatTimedOut
    | JankenStarted
    | HandShown
    | JankenPlayed
    | PieceDistributed
    | DistributionCompleted
)

event_decoder = msgspec.json.Decoder(AnyEvent)


def decode(data: bytes | str) -> Event:
    event: Event = event_decoder.decode(data)
    return event


def points_awarded(event: Event) -> list[tuple[int, int, str]]:
    """Every (seat, points, reason) an event awards: the scores are the sum of these."""
    if isinstance(event, PointsScored) and event.seat is not None:
        return [(event.seat, event.points, f"{event.rule}: {event.detail}")]
    return []
