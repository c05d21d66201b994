"""Valley's mushrooms: covering a stump gains one while any are left; the player places it
beside an area (joining areas) or declines it, and it is lost when there is no space for it."""

from __future__ import annotations

from renature import commands as c
from renature import events as e
from renature.errors import IllegalMushroom, NotYourTurn, WrongPhase
from renature.placement import mushroom_spaces
from renature.state import GameState
from renature.turns import Batch, cell_index, check_seat_number


def gain_mushroom(b: Batch, seat: int) -> None:
    """Valley: covering a stump gives a mushroom while any are left; the player places it at
    once or declines it ("you may immediately take a mushroom"; declined, it stays in the
    supply). It is lost when no meadow space beside an area space is free (rulings)."""
    s = b.state
    if s.mushrooms_left == 0:
        return
    b.emit(
        e.MushroomGained(
            game_id=b.game_id,
            version=b.next_version,
            seat=seat,
            mushrooms_left=s.mushrooms_left - 1,
        )
    )
    if not mushroom_spaces(b.state):
        b.emit(
            e.MushroomLost(
                game_id=b.game_id,
                version=b.next_version,
                seat=seat,
                reason="no free meadow space beside an area space",
            )
        )


def _check_mushroom_holder(s: GameState, seat: int) -> None:
    if s.phase != "place_mushroom":
        raise WrongPhase("You have no mushroom to place or decline.")
    check_seat_number(s, seat)
    if seat != s.current:
        raise NotYourTurn("Only the player who covered the stump decides about the mushroom.")


def place_mushroom(b: Batch, cmd: c.PlaceMushroom) -> None:
    s = b.state
    _check_mushroom_holder(s, cmd.seat)
    cell = cell_index(s, cmd.cell, IllegalMushroom)
    if cell not in mushroom_spaces(s):
        raise IllegalMushroom(
            "A mushroom goes on a free meadow space orthogonally beside at least one area space."
        )
    board = s.board
    joined = sorted({s.area_of[n] for n in board.neighbours[cell] if s.area_of[n] >= 0})
    target = joined[0]
    size = 1 + sum(s.area_sizes[a] for a in joined)
    b.emit(
        e.MushroomPlaced(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            x=cmd.cell.x,
            y=cmd.cell.y,
            area=board.area_ids[target],
            joined=[board.area_ids[a] for a in joined],
            size=size,
        )
    )


def skip_mushroom(b: Batch, cmd: c.SkipMushroom) -> None:
    s = b.state
    _check_mushroom_holder(s, cmd.seat)
    b.emit(
        e.MushroomDeclined(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            mushrooms_left=s.mushrooms_left + 1,
        )
    )
