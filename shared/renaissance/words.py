"""Renaissance's commands and events in its players' words (the web client's moves and log);
anything not named here is told in the platform's plain words."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gameplatform.words import phrased, seat_name

Square = Any
"""A command's ``Square`` or an event's ``At``: anything with ``x`` and ``y``."""


def _at(square: Square) -> str:
    return f"({square.x}, {square.y})"


def _squares(squares: Sequence[Square]) -> str:
    return ", ".join(_at(square) for square in squares)


def _points(points: int) -> str:
    return f"{points} point" if abs(points) == 1 else f"{points} points"


PHRASES: dict[str, Callable[[Any, Sequence[str]], str]] = {
    # commands
    "PlacePiece": lambda i, s: f"place {i.piece} on {_squares(i.squares)}",
    "LiftPiece": lambda i, s: f"lift {i.piece} off the board",
    "PlaceMarker": lambda i, s: f"place a marker on {_at(i.square)}",
    "PushMarker": lambda i, s: f"push the markers at {_at(i.square)} {i.direction}",
    "ProposeEnd": lambda i, s: "propose to end phase 1",
    "ProposeAward": lambda i, s: f"propose to award {i.piece} to {i.to}",
    "AcceptProposal": lambda i, s: "accept the proposal",
    "DeclineProposal": lambda i, s: "decline the proposal",
    "PlaceMonomino": lambda i, s: f"place a monomino on {_at(i.square)}",
    "MoveMarker": lambda i, s: f"move the marker from {_at(i.origin)} to {_at(i.target)}",
    # events
    "GameCreated": lambda i, s: (
        f"game created: {i.players} players, {i.sets} set(s), the winner by {i.competition}"
    ),
    "PlayerJoined": lambda i, s: f"{i.name} took seat {i.seat} ({seat_name(i.seat, s)})",
    "SetStarted": lambda i, s: (
        f"set {i.set_number} started: silver is seat {i.silver_seat}, gold seat {i.gold_seat}"
    ),
    "PiecePlaced": lambda i, s: f"placed {i.piece} on {_squares(i.squares)}",
    "RelocationRequired": lambda i, s: f"pieces must be moved: {', '.join(i.pieces_left)}",
    "PieceLifted": lambda i, s: f"lifted {i.piece} off {_squares(i.squares)}",
    "SetupCompleted": lambda i, s: (
        f"set-up done: monominoes on {_squares(i.monominoes)}; "
        f"{seat_name(i.first_seat, s)} plays first"
    ),
    "MarkerPlaced": lambda i, s: f"placed a {i.colour} marker on ({i.x}, {i.y})",
    "MonominoPlaced": lambda i, s: f"placed a {i.colour} monomino on ({i.x}, {i.y})",
    "MarkersPushed": lambda i, s: f"pushed the markers at ({i.x}, {i.y}) {i.direction}",
    "MarkerMoved": lambda i, s: f"moved a marker from {_at(i.origin)} to {_at(i.target)}",
    "PieceAcquired": lambda i, s: (
        f"{i.colour} acquired {i.piece} ({i.by}: silver {i.silver}, gold {i.gold})"
    ),
    "ProposalMade": lambda i, s: (
        "proposed to end phase 1" if i.kind == "end" else f"proposed to award {i.piece} to {i.to}"
    ),
    "ProposalAccepted": lambda i, s: "accepted the proposal",
    "ProposalDeclined": lambda i, s: "declined the proposal",
    "TurnEnded": lambda i, s: f"ended the turn; {seat_name(i.next_seat, s)} plays next",
    "Phase1Ended": lambda i, s: f"phase 1 ended ({i.reason})",
    "Phase2Ended": lambda i, s: (
        "phase 2 ended; left unplaced: "
        + ("; ".join(f"{c} {', '.join(p)}" for c, p in i.unplaced.items() if p) or "nothing")
    ),
    "PointsScored": lambda i, s: f"{i.colour} scores {_points(i.points)}: {i.detail}",
    "PreparationCompleted": lambda i, s: (
        f"preparation done; {seat_name(i.first_seat, s)} plays first"
    ),
    "SetEnded": lambda i, s: f"set {i.set_number} ended: silver {i.scores[0]}, gold {i.scores[1]}",
    "GameEnded": lambda i, s: (
        "the game ended: "
        + ", ".join(f"{seat_name(n, s)} {score}" for n, score in enumerate(i.scores))
        + "; winner(s): "
        + ", ".join(str(seat_name(n, s)) for n in i.winners)
    ),
}


_SUBJECT = frozenset(
    {
        "PiecePlaced",
        "PieceLifted",
        "MarkerPlaced",
        "MonominoPlaced",
        "MarkersPushed",
        "MarkerMoved",
        "ProposalMade",
        "ProposalAccepted",
        "ProposalDeclined",
        "TurnEnded",
    }
)
"""Events told with their seat as the subject (``Gold placed ...``); a command is the
reader's own move, told without one (``Place ...``)."""


def describe(item: Any, seats: Sequence[str]) -> str:
    """A Renaissance command or event in words; ``seats`` names the seats."""
    return phrased(item, seats, PHRASES, _SUBJECT)
