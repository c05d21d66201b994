"""``legal_actions``: every command a seat may give now (``decide`` accepts exactly these), and
the cloud actions open to it."""

from __future__ import annotations

from collections.abc import Iterator

from renature import commands as c
from renature.components import COLOURS, NEUTRAL, PLANT_TYPES, components, plant_value
from renature.placement import legal_placements, mushroom_spaces, plant_spots
from renature.position import board_capacity, board_slot
from renature.state import GameState


def can_spend_clouds(s: GameState, seat_no: int) -> bool:
    """Whether any cloud action is open to the seat now (same answer as ``cloud_actions``)."""
    if seat_no != s.current or s.phase not in ("place_domino", "place_plant", "end_of_turn"):
        return False
    seat = s.seats[seat_no]
    if seat.clouds >= components().joker_cost:
        return True  # the joker can always move to another animal
    if seat.clouds < 1:
        return False
    capacity = board_capacity(s)
    for code in s.plants:
        if code >= 0 and plant_value(code) <= seat.clouds:
            slot = board_slot(seat, code)
            if slot is not None and seat.plants[slot] < capacity[slot]:
                return True
    return False


def cloud_actions(s: GameState, seat_no: int) -> list[c.CloudAction]:
    """Every cloud action the seat can pay for now (only on its own turn)."""
    if seat_no != s.current or s.phase not in ("place_domino", "place_plant", "end_of_turn"):
        return []
    seat = s.seats[seat_no]
    comps = components()
    out: list[c.CloudAction] = []
    if seat.clouds >= comps.joker_cost:
        out += [
            c.CloudAction(seat_no, "change_joker", animal=name)
            for a, name in enumerate(comps.animals)
            if a != s.joker
        ]
    if s.phase == "end_of_turn" and seat.clouds >= comps.extra_turn_cost and seat.hand:
        out.append(c.CloudAction(seat_no, "extra_turn"))
    if seat.clouds >= 1:
        capacity = board_capacity(s)
        board = s.board
        for cell, code in enumerate(s.plants):
            if code < 0 or plant_value(code) > seat.clouds:
                continue
            slot = board_slot(seat, code)
            if slot is not None and seat.plants[slot] < capacity[slot]:
                out.append(c.CloudAction(seat_no, "return_plant", cell=c.Cell(*board.xy(cell))))
    return out


def plant_options(s: GameState, seat_no: int) -> Iterator[c.PlacePlant]:
    seat = s.seats[seat_no]
    board = s.board
    kinds = [
        (COLOURS[seat.colour if slot < 4 else NEUTRAL], PLANT_TYPES[slot % 4])
        for slot, count in enumerate(seat.plants)
        if count > 0
    ]
    for cell in plant_spots(s):
        where = c.Cell(*board.xy(cell))
        for colour, plant in kinds:
            yield c.PlacePlant(seat_no, where, colour, plant)  # type: ignore[arg-type]


def legal_actions(s: GameState, seat_no: int) -> list[c.Command]:
    """Every command ``seat_no`` may give now; ``decide`` accepts exactly these."""
    if s.phase in ("lobby", "final_scoring", "finished") or seat_no != s.current:
        return []
    if s.phase == "place_mushroom":
        spaces = [c.PlaceMushroom(seat_no, c.Cell(*s.board.xy(m))) for m in mushroom_spaces(s)]
        return [*spaces, c.SkipMushroom(seat_no)]
    seat = s.seats[seat_no]
    out: list[c.Command] = []
    board = s.board
    if s.phase == "place_domino":
        out += [
            c.PlaceDomino(seat_no, d, c.Cell(*board.xy(p)), c.Cell(*board.xy(q)))
            for d, p, q in legal_placements(s, seat.hand)
        ]
        out += [c.DiscardDomino(seat_no, d) for d in sorted(set(seat.hand))]
    elif s.phase == "place_plant":
        out += plant_options(s, seat_no)
        out.append(c.SkipPlant(seat_no))
    elif s.phase == "end_of_turn":
        out.append(c.EndTurn(seat_no))
    out += cloud_actions(s, seat_no)
    return out
