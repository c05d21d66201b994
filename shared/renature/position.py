"""Small reads and writes of a Renature position: the seat of a colour, a seat's player-board
slots and their capacity, a plant's name, and tuples with one value changed."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from renature.components import COLOURS, NEUTRAL, PLANT_TYPES, components, plant_colour, plant_type
from renature.state import GameState, SeatState


def seat_of_colour(state: GameState, colour: int) -> int | None:
    for seat, s in enumerate(state.seats):
        if s.colour == colour:
            return seat
    return None


def board_slot(seat: SeatState, code: int) -> int | None:
    """Index of the player-board slot that holds this plant, or None if not this seat's."""
    colour = plant_colour(code)
    if colour == seat.colour:
        return plant_type(code)
    if colour == NEUTRAL:
        return 4 + plant_type(code)
    return None


def board_capacity(state: GameState) -> tuple[int, ...]:
    return components().player_boards[state.players].capacity(state.players)


def plant_label(code: int) -> str:
    return f"{COLOURS[plant_colour(code)]} {PLANT_TYPES[plant_type(code)]}"


def with_seat(state: GameState, seat: int, **changes: Any) -> tuple[SeatState, ...]:
    seats = list(state.seats)
    seats[seat] = replace(seats[seat], **changes)
    return tuple(seats)


def set_at(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return (*values[:index], value, *values[index + 1 :])
