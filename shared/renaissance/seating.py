"""Seats coming and going: a game created (its variant checked), joined, left, cancelled,
started; a seat resigning or timing out (ruling 18) concedes the game."""

from __future__ import annotations

from renaissance import commands as c
from renaissance import events as e
from renaissance import timing
from renaissance.components import (
    components,
)
from renaissance.errors import (
    GameOver,
    InvalidCommand,
    WrongPhase,
)
from renaissance.sets import begin_set
from renaissance.state import GameState
from renaissance.turns import Batch


def create(cmd: c.CreateGame) -> e.GameCreated:
    if cmd.players != 2:
        raise InvalidCommand("Renaissance is a game for 2 players.")
    if not cmd.game_id or len(cmd.game_id) > 64:
        raise InvalidCommand("A game id must have 1 to 64 characters.")
    if not cmd.seed:
        raise InvalidCommand("A game needs a seed (it seeds the bots).")
    if isinstance(cmd.variant, c.Variant) and (problem := variant_problem(cmd.variant)):
        raise InvalidCommand(problem)
    return e.GameCreated(
        game_id=cmd.game_id,
        version=1,
        seed=cmd.seed,
        players=2,
        sets=cmd.sets,
        competition=cmd.competition,
        pieces=[
            e.PieceInfo(p.id, [e.At(x, y) for x, y in p.shape], list(p.tags))
            for p in components().pieces
        ],
        clock=timing.checked_control(cmd.clock),
        variant=cmd.variant,
    )


def variant_problem(variant: c.Variant) -> str | None:
    """Why a variant cannot be played (None when it can): each option belongs to its variant."""
    if variant.extra_hands and variant.play != "phase1":
        return "Extra hands are for a game of Phase 1 only (play: phase1)."
    if len(set(variant.extra_hands)) != len(variant.extra_hands):
        return "Name each extra hand once."
    if variant.distribution is not None and variant.play != "phase2":
        return "A distribution of the pieces is for a game of Phase 2 only (play: phase2)."
    if variant.phase2_agreement and variant.play == "phase1":
        return "A game of Phase 1 only has no Phase 2 to end by agreement."
    return None


def join(b: Batch, cmd: c.JoinGame) -> None:
    s = b.state
    if s.phase != "lobby":
        raise WrongPhase("The game has started; no more players can join.")
    if s.names[cmd.seat] is not None:
        raise InvalidCommand(f"Seat {cmd.seat} is taken already.")
    if not cmd.name or len(cmd.name) > 64:
        raise InvalidCommand("A player's name must have 1 to 64 characters.")
    b.emit(e.PlayerJoined, seat=cmd.seat, name=cmd.name)


def _lobby_seat(s: GameState, seat: int) -> None:
    if s.phase != "lobby":
        raise WrongPhase("The game has started: resign instead of leaving.")
    if s.names[seat] is None:
        raise InvalidCommand(f"Nobody sits on seat {seat}.")


def leave(b: Batch, cmd: c.LeaveGame) -> None:
    _lobby_seat(b.state, cmd.seat)
    b.emit(e.PlayerLeft, seat=cmd.seat, reason="left")


def remove_player(b: Batch, cmd: c.RemovePlayer) -> None:
    _lobby_seat(b.state, cmd.seat)
    b.emit(e.PlayerLeft, seat=cmd.seat, reason="removed")


def cancel(b: Batch, _: c.CancelGame) -> None:
    s = b.state
    if s.phase in ("cancelled", "finished"):
        raise GameOver("The game is over.")
    if s.phase != "lobby":
        raise WrongPhase("Only a game that has not started can be cancelled.")
    b.emit(e.GameCancelled)


def resign(b: Batch, cmd: c.Resign) -> None:
    """The seat gives up: the other seat wins the game, whatever the scores (rulings,
    "Resigning"); the scores stand as they are."""
    s = b.state
    if s.phase == "lobby":
        raise WrongPhase("The game has not started: leave the lobby instead.")
    if s.phase in ("cancelled", "finished"):
        raise GameOver("The game is over.")
    _concede(b, cmd.seat, "resigned")


def claim_timeout(b: Batch, cmd: c.ClaimTimeout) -> None:
    """The seat whose time ran out loses, as if it resigned (ruling 18); refused before the
    deadline by the batch's recorded time."""
    s = b.state
    if s.phase == "lobby":
        raise WrongPhase("The game has not started: no clock runs.")
    if s.phase in ("cancelled", "finished"):
        raise GameOver("The game is over.")
    deadline = timing.deadline_passed(s, cmd.seat, b.cause.time if b.cause else None)
    b.emit(e.SeatTimedOut, seat=cmd.seat, deadline=deadline, on_timeout="remove")
    _concede(b, cmd.seat, "timeout")


def _concede(b: Batch, seat: int, reason: str) -> None:
    """``seat`` is out: the other seat wins, the scores stand as they are."""
    s = b.state
    other = 1 - seat
    b.emit(e.SeatResigned, seat=seat, reason=reason)
    b.emit(
        e.GameEnded,
        scores=list(s.scores),
        sets_won=list(s.sets_won),
        competition=s.competition,
        ranking=[other, seat],
        winners=[other],
    )


def start(b: Batch, _: c.StartGame) -> None:
    s = b.state
    if s.phase != "lobby":
        raise WrongPhase("The game has started already.")
    if None in s.names:
        raise WrongPhase("Renaissance needs both seats taken before it starts.")
    begin_set(b, 1, 0)
