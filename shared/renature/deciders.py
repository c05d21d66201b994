"""The deciders of Renature (``DECIDERS``, one per command, with the seats' own from
``seating``): creating a game, joining, starting, step A (a domino placed or discarded), step B
(a plant), ending a turn; cloud actions, mushrooms and the end of the game have their modules.

Rule references point at the English online rules ("A:", "B:", "C:", "D:") and at the rulings
page (``ruling N``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from renature import commands as c
from renature import events as e
from renature import seating
from renature.board import PATH, Board, UnknownBoard
from renature.clouds import cloud_action
from renature.components import COLOURS, NEUTRAL, PLANT_TYPES, components, plant_code, plant_value
from renature.deal import commitment, deal
from renature.ending import finish
from renature.errors import IllegalPlacement, IllegalPlant, InvalidCommand, NotInHand, WrongPhase
from renature.evolve import Board_of
from renature.mushrooms import gain_mushroom, place_mushroom, skip_mushroom
from renature.placement import allowed_animals, plant_spots
from renature.position import board_slot
from renature.scoring import plant_points
from renature.state import GameState, SeatState
from renature.turns import (
    Batch,
    animal_name,
    cell_index,
    check_seat_number,
    check_turn,
    end_turn,
    finish_turn_steps,
)


def create(cmd: c.CreateGame) -> e.GameCreated:
    comps = components()
    if cmd.players not in comps.seat_colours:
        raise InvalidCommand("Renature is played by 2, 3 or 4 players.")
    if not cmd.game_id or len(cmd.game_id) > 64:
        raise InvalidCommand("A game id must have 1 to 64 characters.")
    if not cmd.seed:
        raise InvalidCommand("A game needs a seed for its deal.")
    if (problem := seating.time_control_problem(cmd.clock)) is not None:
        raise InvalidCommand(problem)
    board = Board_of_checked(cmd.board)
    return e.GameCreated(
        game_id=cmd.game_id,
        version=1,
        board=board.id,
        players=cmd.players,
        seat_colours=list(comps.seat_colours[cmd.players]),
        seed_commitment=commitment(cmd.seed, cmd.salt),
        deal=deal(cmd.seed, cmd.players, board),
        dominoes=[(comps.animals[a], comps.animals[b]) for a, b in comps.dominoes],
        clock=cmd.clock,
        chosen_seed=cmd.chosen_seed,
    )


def Board_of_checked(board_id: str) -> Board:  # noqa: N802
    try:
        return Board_of(board_id)
    except UnknownBoard as err:
        raise InvalidCommand(str(err)) from None


def _join(b: Batch, cmd: c.JoinGame) -> None:
    s = b.state
    if s.phase != "lobby":
        raise WrongPhase("The game has started; no more players can join.")
    check_seat_number(s, cmd.seat)
    if s.seats[cmd.seat].name is not None:
        raise InvalidCommand(f"Seat {cmd.seat} is taken already.")
    name = cmd.name.strip()
    if not 1 <= len(name) <= 40:
        raise InvalidCommand("A player name must have 1 to 40 characters.")
    b.emit(e.PlayerJoined(game_id=b.game_id, version=b.next_version, seat=cmd.seat, name=name))


def _start(b: Batch, _: c.StartGame) -> None:
    s = b.state
    if s.phase != "lobby":
        raise WrongPhase("The game has started already.")
    empty = [seat for seat, st in enumerate(s.seats) if st.name is None]
    if empty:
        raise WrongPhase(f"Seats {empty} have no player yet.")
    scores = list(components().starting_scores[: s.players])
    b.emit(
        e.GameStarted(
            game_id=b.game_id, version=b.next_version, first_seat=0, starting_scores=scores
        )
    )


def _check_step_a(s: GameState, seat_no: int, domino: int) -> SeatState:
    """Step A: once per turn, with a domino from one's own hand."""
    seat = check_turn(s, seat_no)
    if s.phase != "place_domino":
        raise WrongPhase("You have already placed or discarded a domino this turn.")
    if domino not in seat.hand:
        raise NotInHand(f"Domino {domino} is not in your hand.")
    return seat


def _place_domino(b: Batch, cmd: c.PlaceDomino) -> None:
    s = b.state
    seat = _check_step_a(s, cmd.seat, cmd.domino)
    first = cell_index(s, cmd.first, IllegalPlacement)
    second = cell_index(s, cmd.second, IllegalPlacement)
    board = s.board
    if second not in board.neighbours[first]:
        raise IllegalPlacement("The two halves of a domino must lie on two spaces side by side.")
    _check_brook_spaces(s, (first, second))
    animals = components().dominoes[cmd.domino]
    _check_animals_match(s, (first, second), animals)
    taken = returned = 0
    if any(s.clouds[cell] for cell in (first, second)):
        found = s.clouds[first] + s.clouds[second]
        taken = min(found, components().cloud_spaces - seat.clouds)
        returned = found - taken
    stumps = sum(1 for cell in (first, second) if cell in board.stumps)
    b.emit(
        e.DominoPlaced(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            domino=cmd.domino,
            first=e.Half(*board.xy(first), animal_name(animals[0])),
            second=e.Half(*board.xy(second), animal_name(animals[1])),
            joker=animal_name(s.joker),
            clouds_taken=taken,
            clouds_returned=returned,
            stumps_covered=stumps,
        )
    )
    if stumps:
        gain_mushroom(b, cmd.seat)


def _check_brook_spaces(s: GameState, cells: tuple[int, int]) -> None:
    """Both halves on free brook spaces."""
    board = s.board
    path = board.path_name
    for cell in cells:
        where = board.xy(cell)
        if board.kinds[cell] != PATH or s.area_of[cell] >= 0:
            raise IllegalPlacement(
                f"Both halves must lie on {path} spaces; {where} is not a {path} space."
            )
        if s.cover[cell] >= 0:
            raise IllegalPlacement(f"The {path} space {where} is already covered.")


def _check_animals_match(s: GameState, cells: tuple[int, int], animals: tuple[int, int]) -> None:
    """Every animal beside each half matches it (ruling 1), and one half is anchored."""
    board = s.board
    anchored = False
    for cell, animal in zip(cells, animals, strict=True):
        mask, cell_anchored = allowed_animals(s, cell)
        anchored = anchored or cell_anchored
        if not mask & (1 << animal):
            clash = next(
                n
                for n in board.neighbours[cell]
                if s.cover[n] >= 0 and s.cover[n] not in (animal, s.joker) and animal != s.joker
            )
            raise IllegalPlacement(
                f"All animals beside each other must match: the {animal_name(animal)} on "
                f"{board.xy(cell)} would lie beside the {animal_name(s.cover[clash])} on "
                f"{board.xy(clash)} (the joker is the {animal_name(s.joker)})."
            )
    if not anchored:
        raise IllegalPlacement(
            "At least one half must lie on a starting space or beside a matching animal."
        )


def _discard(b: Batch, cmd: c.DiscardDomino) -> None:
    _check_step_a(b.state, cmd.seat, cmd.domino)
    b.emit(
        e.DominoDiscarded(
            game_id=b.game_id, version=b.next_version, seat=cmd.seat, domino=cmd.domino
        )
    )
    finish_turn_steps(b, cmd.seat)


def _place_plant(b: Batch, cmd: c.PlacePlant) -> None:
    s = b.state
    seat = check_turn(s, cmd.seat)
    _check_plant_phase(s)
    cell = cell_index(s, cmd.cell, IllegalPlant)
    where = (cmd.cell.x, cmd.cell.y)
    if s.area_of[cell] < 0:
        raise IllegalPlant(f"Plants go on area spaces; {where} is not an area space.")
    if s.plants[cell] >= 0:
        raise IllegalPlant(f"There is already a plant on {where}.")
    if cell not in plant_spots(s):
        raise IllegalPlant("A plant must go on an area space beside the domino you just placed.")
    if cmd.colour not in COLOURS or cmd.plant not in PLANT_TYPES:
        raise InvalidCommand(f"There is no {cmd.colour} {cmd.plant}.")
    colour = COLOURS.index(cmd.colour)
    if colour not in (seat.colour, NEUTRAL):
        raise IllegalPlant("You may only plant your own colour or neutral plants.")
    code = plant_code(colour, PLANT_TYPES.index(cmd.plant))
    slot = board_slot(seat, code)
    assert slot is not None
    if seat.plants[slot] == 0:
        raise IllegalPlant(f"You have no {cmd.colour} {cmd.plant} left on your player board.")
    points, counted = plant_points(s, cell, code)
    found = s.clouds[cell]  # cloud area spaces (base game, Valley variant)
    taken = min(found, components().cloud_spaces - seat.clouds)
    b.emit(
        e.PlantPlaced(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            x=cmd.cell.x,
            y=cmd.cell.y,
            area=s.board.area_ids[s.area_of[cell]],
            colour=cmd.colour,
            plant=cmd.plant,
            value=plant_value(code),
            points=points,
            reason=f"{cmd.plant}: 1 for itself + {counted} for plants of equal or lower value "
            f"in area {s.board.area_ids[s.area_of[cell]]}",
            clouds_taken=taken,
            clouds_returned=found - taken,
        )
    )
    finish_turn_steps(b, cmd.seat)


def _check_plant_phase(s: GameState) -> None:
    if s.phase == "place_domino":
        raise WrongPhase("Place a domino first: a plant goes beside the domino placed this turn.")
    if s.phase != "place_plant":
        raise WrongPhase("You may place one plant only, right after placing your domino.")


def _skip_plant(b: Batch, cmd: c.SkipPlant) -> None:
    check_turn(b.state, cmd.seat)
    _check_plant_phase(b.state)
    b.emit(e.PlantSkipped(game_id=b.game_id, version=b.next_version, seat=cmd.seat))
    finish_turn_steps(b, cmd.seat)


def _end_turn_command(b: Batch, cmd: c.EndTurn) -> None:
    s = b.state
    check_turn(s, cmd.seat)
    if s.phase == "place_domino":
        raise WrongPhase("Place or discard a domino before ending your turn.")
    if s.phase == "place_plant":
        raise WrongPhase("Place a plant or skip it before ending your turn.")
    end_turn(b, cmd.seat)


DECIDERS: dict[type[c.Command], Callable[[Batch, Any], None]] = {
    c.JoinGame: _join,
    c.StartGame: _start,
    c.PlaceDomino: _place_domino,
    c.DiscardDomino: _discard,
    c.PlacePlant: _place_plant,
    c.SkipPlant: _skip_plant,
    c.CloudAction: cloud_action,
    c.PlaceMushroom: place_mushroom,
    c.SkipMushroom: skip_mushroom,
    c.EndTurn: _end_turn_command,
    c.FinishGame: finish,
    **seating.DECIDERS,
}
