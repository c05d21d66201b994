"""Cloud actions ("Cloud actions"): change the joker, take another turn, return a plant to
one's player board, each paid with clouds."""

from __future__ import annotations

from renature import commands as c
from renature import events as e
from renature.components import (
    COLOURS,
    PLANT_TYPES,
    components,
    plant_colour,
    plant_type,
    plant_value,
)
from renature.errors import IllegalCloudAction, InvalidCommand, NotEnoughClouds, WrongPhase
from renature.position import board_capacity, board_slot, plant_label
from renature.state import SeatState
from renature.turns import Batch, animal_name, cell_index, check_turn


def cloud_action(b: Batch, cmd: c.CloudAction) -> None:
    seat = check_turn(b.state, cmd.seat)
    _check_cloud_action_fields(cmd)
    if cmd.kind == "change_joker":
        _cloud_change_joker(b, cmd, seat)
    elif cmd.kind == "extra_turn":
        _cloud_extra_turn(b, cmd, seat)
    elif cmd.kind == "return_plant":
        _cloud_return_plant(b, cmd, seat)
    else:  # pragma: no cover - msgspec rejects other kinds when decoding
        raise InvalidCommand(f"Unknown cloud action {cmd.kind!r}.")


def _cloud_change_joker(b: Batch, cmd: c.CloudAction, seat: SeatState) -> None:
    s, comps = b.state, components()
    if cmd.animal not in comps.animals:
        raise InvalidCommand(f"Name the new joker animal, one of: {', '.join(comps.animals)}.")
    if comps.animal(cmd.animal) == s.joker:
        raise IllegalCloudAction(f"The {cmd.animal} is the joker already.")
    _pay_check(seat, comps.joker_cost, "change the joker")
    b.emit(
        e.JokerChanged(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            from_animal=animal_name(s.joker),
            to_animal=cmd.animal,
            cost=comps.joker_cost,
        )
    )


def _cloud_extra_turn(b: Batch, cmd: c.CloudAction, seat: SeatState) -> None:
    s, comps = b.state, components()
    if s.phase != "end_of_turn":
        raise WrongPhase("Another turn can only be taken at the end of your turn.")
    _pay_check(seat, comps.extra_turn_cost, "take another turn")
    if not seat.hand:
        raise IllegalCloudAction("You have no domino left to take another turn with.")
    b.emit(
        e.ExtraTurnTaken(
            game_id=b.game_id, version=b.next_version, seat=cmd.seat, cost=comps.extra_turn_cost
        )
    )


def _cloud_return_plant(b: Batch, cmd: c.CloudAction, seat: SeatState) -> None:
    s = b.state
    if cmd.cell is None:
        raise InvalidCommand("Name the cell of the plant to return.")
    cell = cell_index(s, cmd.cell, IllegalCloudAction)
    code = s.plants[cell]
    if code < 0:
        raise IllegalCloudAction(f"There is no plant on ({cmd.cell.x}, {cmd.cell.y}).")
    slot = board_slot(seat, code)
    if slot is None:
        raise IllegalCloudAction("You may only return plants of your colour or neutral plants.")
    if seat.plants[slot] >= board_capacity(s)[slot]:
        raise IllegalCloudAction(f"Your player board has no free space for a {plant_label(code)}.")
    _pay_check(seat, plant_value(code), f"return a {plant_label(code)}")
    b.emit(
        e.PlantReturned(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            x=cmd.cell.x,
            y=cmd.cell.y,
            area=s.board.area_ids[s.area_of[cell]],
            colour=COLOURS[plant_colour(code)],
            plant=PLANT_TYPES[plant_type(code)],
            cost=plant_value(code),
        )
    )


def _check_cloud_action_fields(cmd: c.CloudAction) -> None:
    """A cloud action names what its kind needs and nothing else, so that every command
    ``decide`` accepts is one ``legal_actions`` lists."""
    if cmd.kind == "change_joker" and cmd.cell is not None:
        raise InvalidCommand("Changing the joker names an animal, not a cell.")
    if cmd.kind == "extra_turn" and (cmd.animal is not None or cmd.cell is not None):
        raise InvalidCommand("Another turn names neither an animal nor a cell.")
    if cmd.kind == "return_plant" and cmd.animal is not None:
        raise InvalidCommand("Returning a plant names its cell, not an animal.")


def _pay_check(seat: SeatState, cost: int, what: str) -> None:
    if seat.clouds < cost:
        raise NotEnoughClouds(f"To {what} you need {cost} clouds; you have {seat.clouds}.")
